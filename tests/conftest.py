"""Shared test configuration: pytester for the plugin tests, and hypothesis profiles."""

import os

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
