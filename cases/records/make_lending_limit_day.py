"""Write ``lending-limit-day.json``: a day of Kueue Workloads for the gallery case
``cases/imported/kueue/lending-limit`` (ClusterQueues team-a-cq and team-b-cq in cohort team-ab), as
``kubectl get localqueues,workloads -A -o json`` lists them: two LocalQueues, and Workloads with
their creation, admission and finish times.

The records are generated (seeded), not taken from a cluster: no public cluster publishes a day of
its Workloads.  team-a submits a few large jobs, team-b many small ones through the working day;
each Workload is admitted shortly after it is created and finishes after its run time.  The
README's worked example imports them with the ClusterQueues (``fairalloc import ... --jobs``).

Run: python cases/records/make_lending_limit_day.py   (writes the file beside this script)
"""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

DAY = datetime(2026, 11, 2, 8, 0, tzinfo=UTC)


def stamp(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def workload(name: str, queue: str, pods: int, cpu: float, created: datetime, admitted: datetime, run: float) -> dict:
    container = {"name": "main", "image": "busybox", "resources": {"requests": {"cpu": f"{int(cpu * 1000)}m"}}}
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": {"name": name, "namespace": queue.removesuffix("-lq"), "creationTimestamp": stamp(created)},
        "spec": {
            "queueName": queue,
            "podSets": [{"name": "main", "count": pods, "template": {"spec": {"containers": [container]}}}],
        },
        "status": {
            "conditions": [
                {"type": "QuotaReserved", "status": "True", "lastTransitionTime": stamp(admitted)},
                {"type": "Admitted", "status": "True", "lastTransitionTime": stamp(admitted)},
                {"type": "Finished", "status": "True", "lastTransitionTime": stamp(admitted + timedelta(seconds=run))},
            ]
        },
    }


def records(seed: int = 7) -> dict:
    rng = random.Random(seed)
    items: list[dict] = [
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "LocalQueue",
            "metadata": {"name": f"team-{t}-lq", "namespace": f"team-{t}"},
            "spec": {"clusterQueue": f"team-{t}-cq"},
        }
        for t in "ab"
    ]
    jobs = []
    for k in range(12):  # team-a: large training jobs, 4 to 8 CPUs, 30 to 90 minutes
        t = DAY + timedelta(minutes=40 * k + rng.randint(0, 20))
        jobs.append((t, f"train-{k + 1}", "team-a-lq", rng.choice([1, 2]), 4.0, rng.randint(30, 90) * 60.0))
    for k in range(48):  # team-b: small evaluation jobs, 1 to 2 CPUs, 5 to 40 minutes
        t = DAY + timedelta(minutes=10 * k + rng.randint(0, 9))
        jobs.append((t, f"eval-{k + 1}", "team-b-lq", 1, rng.choice([1.0, 2.0]), rng.randint(5, 40) * 60.0))
    for created, name, queue, pods, cpu, run in sorted(jobs):
        items.append(workload(name, queue, pods, cpu, created, created + timedelta(seconds=rng.randint(1, 30)), run))
    return {"apiVersion": "v1", "kind": "List", "items": items}


if __name__ == "__main__":
    out = Path(__file__).with_name("lending-limit-day.json")
    out.write_text(json.dumps(records(), indent=1) + "\n")
    print(f"wrote {out}")
