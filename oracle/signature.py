"""A finding's signature: what makes two findings one bug, so a campaign reports bugs, not examples.

The signature is the finding's kind, the stage it is blamed on, the role of what it hits and the known tinygrad bug it
matches, if any. The role is read off the subject's name alone, never its numbers: `p0.grad` and `p3.grad` are both
`.grad`, `buf1785` and `buf2883` both a planned buffer, so the same bug in two programs has one signature.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from oracle.findings import Finding

UNBLAMED = "unblamed"  # a crash or hang of the worker: no rerun could tell a stage
# (pattern on the subject, role), first match wins; the names are those the oracle and the generator give
ROLES = ((r"^ret(\[|$)", "returned"), (r"^eval(\[|$)", "value the eval step returns"),
         (r"\.grad$", "grad"), (r"^kept\[", "kept"), (r"^s\d+$", "state"), (r"^p\d+$", "parameter"),
         (r"^x\d+$", "input"), (r"^input ", "input"), (r"^live tensor ", "unnamed live tensor"), (r"^step$", "step"),
         (r"^(buf\d+|arena\d+\[)", "planned buffer"), (r"^arena \d+$", "arena"), (r"^one-time ", "one-time call"),
         (r"^planner$", "planner"), (r"^worker$", "worker process"))


def role(subject: str) -> str:
  """The kind of observable or buffer a finding is about, without its numbers; `other` for a name no rule knows."""
  return next((name for pattern, name in ROLES if re.search(pattern, subject)), "other")


@dataclass(frozen=True, order=True)
class Signature:
  kind: str
  stage: str
  role: str
  known: str | None = None

  def __str__(self) -> str:
    blame = "no stage blamed" if self.stage == UNBLAMED else f"blamed on {self.stage}"
    article = "an" if self.role[0] in "aeiou" and not self.role.startswith("one") else "a"  # a one-time call
    return f"{self.kind} on {article} {self.role}, {blame}" + (f" (known tinygrad bug {self.known})" if self.known else "")

  @property
  def key(self) -> str:
    """A short stable name for files and claims: the same in every process."""
    return re.sub(r"[^a-z0-9]+", "-", f"{self.kind}-{self.role}-{self.stage}-{self.known or 'new'}".lower()).strip("-")


def signature(f: Finding, known: str | None = None) -> Signature:
  return Signature(f.kind, f.attribution or UNBLAMED, role(f.subject), known)
