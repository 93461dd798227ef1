"""Settings for the whole suite."""

from hypothesis import HealthCheck, settings

# Property tests judge behaviour, never time: one garbage collection or a busy core must not fail
# an example for taking longer than hypothesis's default 200 ms.
settings.register_profile("tabwarden", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("tabwarden")
