"""The Python functions behind the bundled tool sets (``harness/toolsets/*.yaml``).

- ``memory``: add / search / get facts;
- ``todo``: create / list / complete items;
- ``get_weather``, ``get_time``: lookups over fixed data for a few cities
  (an unknown city is a tool error, which error scenarios use);
- ``convert_temperature``: Celsius to Fahrenheit, for sequential chains.

Each is ``function(arguments, state)``; ``state`` lives for one run.
"""
