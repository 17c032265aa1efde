"""torch.profiler of the fake GPU (_fake_cuda.profiler_module): CUDA activity
records of the kernels torch.cuda runs while a profile is on."""

from . import cuda
from ._fake_cuda import profiler_module

_module = profiler_module(cuda)
profile = _module.profile
ProfilerActivity = _module.ProfilerActivity
DeviceType = _module.DeviceType
