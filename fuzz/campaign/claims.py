"""Who shrinks a bug: the first worker to claim its signature, across a campaign's processes or a whole CI fleet.

Shrinking is the costly part of a bug; each distinct bug is shrunk once. A campaign's workers claim signatures with
files created O_EXCL in one directory (beside the repro scripts, so a resumed campaign does not shrink again what it
shrank before). With `--db redis://...` the claims go through that redis instead (an atomic SET NX per signature,
under the campaign's `--fleet` name), so of the runners of a CI matrix only the first to meet a bug shrinks it; the
others count it and hand over its unshrunk repro, and `planfuzz merge` keeps the shrunk one.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from oracle.signature import Signature

CLAIM_TTL_S = 7 * 24 * 3600  # a fleet's claims outlive any campaign of it, and are gone a week later
REDIS_SCHEMES = ("redis://", "rediss://", "unix://")


@dataclass(frozen=True)
class ClaimBook:
  """Where claims are made: a directory, or a redis URL and the fleet's name (None: this worker alone claims)."""
  where: str | None
  fleet: str = "local"
  claimant: str = ""  # who claims, as the fleet is told (runner, seed, target)

  def take(self, sig: Signature) -> bool:
    """True for the one caller, in any process of the campaign or fleet, that claims `sig` first."""
    if self.where is None: return True
    if self.where.startswith(REDIS_SCHEMES): return self._take_redis(sig)
    Path(self.where).mkdir(parents=True, exist_ok=True)  # at the first claim: a clean campaign leaves no empty folder
    try: os.close(os.open(Path(self.where) / sig.key, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError: return False
    return True

  def _key(self, sig: Signature) -> str: return f"planfuzz:claim:{self.fleet}:{sig.key}"

  def _take_redis(self, sig: Signature) -> bool:
    import redis  # only where a fleet claims through it
    client = redis.Redis.from_url(self.where, socket_connect_timeout=3, socket_timeout=10)
    return bool(client.set(self._key(sig), self.claimant or "?", nx=True, ex=CLAIM_TTL_S))


def claim_book(db: str, repro_dir: Path, fleet: str, claimant: str) -> ClaimBook:
  """The campaign's claims: through `db` when it is a redis (a fleet shares them), else in `repro_dir`'s `.claims`."""
  if db.startswith(REDIS_SCHEMES): return ClaimBook(db, fleet, claimant)
  return ClaimBook(str(repro_dir / ".claims"), fleet, claimant)
