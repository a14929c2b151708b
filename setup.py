"""Build of the optional compiled kernel (everything else is in pyproject.toml).

``dynid.models._rnea_kernel`` speeds up the batched Newton–Euler regressor of URDF/DH robots.
It is optional: where no C compiler is available the build skips it with a warning and dynid
uses its numpy path, which gives the same numbers.
"""

from setuptools import Extension, setup

setup(ext_modules=[Extension("dynid.models._rnea_kernel", ["src/dynid/models/_rnea_kernel.c"], optional=True)])
