"""Identify a vertical crank arm (softMC rotary model 3) from a recording, with the library API.

    python examples/identify_crank_arm.py

Simulates the recording (no hardware needed), identifies the axis, prints the parameters and
predicts the torque of a second motion.
"""

import numpy as np

from dynid import Plant, identify, make_model
from dynid.fitted import predict
from dynid.sim import SimOptions, SineMotion, simulate

plant = Plant(make_model("rotary3"))
truth = [0.5, 0.0, 20.0, 0.0, 0.8, 1.5]  # I, L^2, M*g*A, g*L, viscous, Coulomb
run = simulate(plant, truth, SineMotion([-2.0], [2.0], [0.5], record_s=12), SimOptions(noise=0.005), seed=1)

result = identify(run, plant)
print(result.message)
for name, value, status in zip(result.plant.param_names, result.theta, result.status):
    print(f"  {name:12s} {value:10.5f}  {status}")

check = simulate(plant, truth, SineMotion([-1.0], [1.8], [0.8], record_s=6), SimOptions(noise=0.005), seed=2)
model = result.model
print("validation NRMSE:", np.round(100 * predict(model, check).nrmse(), 2), "%")
