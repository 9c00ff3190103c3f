"""Table statistics: compute-stats (NDV sketches in Puffin) and partition-stats."""
