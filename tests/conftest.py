"""Shared test configuration: pytester for the plugin tests, and hypothesis profiles."""

import os

# pytester unloads, when a test ends, every module the test imported first. numpy's extension
# modules refuse a second load in one process ("cannot load module more than once per
# process"), and numpy itself does not load numpy.fft: scipy does, under scikit-learn (the
# explorer's PCA). A test under pytester that imported scikit-learn first made every later
# import of it fail: the next app built showed "needs 'sklearn', which is not installed" and
# drew nothing. The numpy packages with such a module are loaded here, before any test, so no
# test is the first to import them.
import numpy.fft
import numpy.linalg.lapack_lite  # noqa: F401
from hypothesis import HealthCheck, settings

pytest_plugins = ["pytester"]

settings.register_profile(
    "default", deadline=None, suppress_health_check=[HealthCheck.too_slow], max_examples=100
)
settings.register_profile("ci", parent=settings.get_profile("default"), max_examples=200)
settings.load_profile("ci" if os.environ.get("CI") else "default")

# Haystack sends anonymous usage telemetry from Pipeline.run unless told not to; tests never
# touch the network (the docs' snippets run Haystack pipelines in this process too).
os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")
