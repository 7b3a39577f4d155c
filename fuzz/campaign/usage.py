"""How `planfuzz` tells its caller what happened: exit statuses, and bad input as one line naming the fix."""
BOTH = "both"  # --mode: each example draws its input mode
EXIT_OK, EXIT_FOUND, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
  """Bad input from the user: printed as one line, exit status 2."""
