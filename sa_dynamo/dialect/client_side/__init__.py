"""What the client computes over reads the planner plans, exactly and within caps that raise
rather than cut: single_read.py (the compiler's part in one read finished by the driver: a key
list as a batch, an ORDER BY or OFFSET the driver applies) and cursor_setup.py (that read's
set-up for one execution)."""
