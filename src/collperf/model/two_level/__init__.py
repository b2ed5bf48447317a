"""Two-level (nodes x ranks per node) pricing and schedules: the plans, their composed schedules, flat algorithms priced per level."""
