"""icectl: command-line administration for Apache Iceberg tables (format versions 1 to 4)."""

__version__ = "0.1.0"
