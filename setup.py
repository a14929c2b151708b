"""Build of the optional compiled kernel (everything else is in pyproject.toml).

``dynid.models._rnea_kernel`` speeds up the batched Newton–Euler regressor of URDF/DH robots,
``dynid.io._csv_kernel`` the reading of numeric CSV recordings. Both are optional: where no C compiler
is available the build skips them with a warning and dynid uses numpy, which gives the same numbers.
"""

from setuptools import Extension, setup

setup(ext_modules=[Extension("dynid.models._rnea_kernel", ["src/dynid/models/_rnea_kernel.c"], optional=True),
                   Extension("dynid.io._csv_kernel", ["src/dynid/io/_csv_kernel.c"], optional=True)])
