"""Spark behind one seam: the spark-submit job template, rendering it to an argument list (a
pure function), and running it (one place, with a timeout and exit-code mapping)."""
