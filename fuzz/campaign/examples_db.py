"""Where failing examples outlive a campaign: Hypothesis example databases, opened from a URL.

A failure Hypothesis saved is replayed first by the next campaign pointing at the same database, whatever its
seed, so a bug stays in view until it is fixed. CI runners share one Redis database (`--db redis://...`); a
developer keeps a local directory and reads the shared one read-only next to it (`--shared-db redis://...`), so
their half-finished experiments never land in CI's database.
"""
from __future__ import annotations

from hypothesis.database import DirectoryBasedExampleDatabase, ExampleDatabase, MultiplexedDatabase, ReadOnlyDatabase

DEFAULT_DB = ".hypothesis/planfuzz"
NONE = "none"


class DatabaseError(ValueError):
  """A database URL that does not open: the message says which and why."""


def _redis(url: str) -> ExampleDatabase:
  try:
    import redis
    from hypothesis.extra.redis import RedisExampleDatabase
  except ImportError as e:
    raise DatabaseError(f"database {url}: needs the redis client (pip install redis): {e}") from e
  client = redis.Redis.from_url(url, socket_connect_timeout=3, socket_timeout=10)
  try: client.ping()
  except redis.RedisError as e: raise DatabaseError(f"database {url} is unreachable: {e}") from e
  return RedisExampleDatabase(client)


def open_one(url: str) -> ExampleDatabase | None:
  """`none`, a `redis://host:port/N` URL, or a directory path."""
  if url == NONE: return None
  if url.startswith(("redis://", "rediss://", "unix://")): return _redis(url)
  if "://" in url: raise DatabaseError(f"database {url}: unknown scheme; use a directory path, redis://host:port/N or {NONE}")
  return DirectoryBasedExampleDatabase(url)


def open_database(url: str = DEFAULT_DB, shared: str | None = None) -> ExampleDatabase | None:
  """`url` read-write; `shared`, when given, read-only next to it (new failures go to `url` only)."""
  own = open_one(url)
  if shared is None: return own
  theirs = open_one(shared)
  if theirs is None: return own
  return ReadOnlyDatabase(theirs) if own is None else MultiplexedDatabase(own, ReadOnlyDatabase(theirs))
