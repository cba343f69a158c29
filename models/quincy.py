"""A Quincy-style scheduler on offers (``quincy``): each instant's placements from one min-cost flow.

Isard, Prabhakaran, Currey, Wieder, Talwar, Goldberg, "Quincy: Fair Scheduling for Distributed
Computing Clusters", SOSP 2009 (simplified: :class:`Quincy`). A scheduler of task offers only (kind
``online``), for small clusters (a pure-Python flow network).
"""

from __future__ import annotations

from fairalloc.core import limits
from fairalloc.core.errors import CaseError
from fairalloc.core.registry import register
from fairalloc.engines.filling import drf_shares
from fairalloc.engines.offers import EPS, OnlineMechanism, Scheduler


class Quincy(Scheduler):
    """A Quincy-style scheduler (Isard et al., SOSP 2009): each instant's placements from one min-cost flow.

    At the first offer of an instant, one flow problem (``networkx.min_cost_flow``) is solved over
    every owner with runnable work and every node with free room; the offers of that instant then
    hand out its placements. The network, per owner ``u`` (supply: her runnable tasks, at most
    as many as fit the free room):

    * ``u -> unscheduled -> sink``: cost ``B + 1 + w_u``, ``w_u`` the whole seconds since her next
      job was submitted (Quincy's unscheduled edge: leaving work waiting costs more the longer it
      has waited), ``B = 1 + max_u w_u``;
    * ``u -> fair_u -> G_u``: capacity ``max(0, F_u - running_u)``, cost 0, ``F_u`` the whole tasks
      of her DRF share among the owners with work (:func:`drf_shares`, as the fairness error); and
      ``u -> G_u``: uncapped, cost ``B`` (above her share). Placing a task within its owner's share
      saves at least ``B + 1``, above it at most ``B``: quota tasks are placed first, and spare room
      goes to the owners waiting longest (the fairness bounds as costs, not as hard lower / upper
      flow bounds, which could make the problem infeasible);
    * ``G_u -> node k``: capacity how many of her next task fit the node's free CPU and memory;
      ``node k -> sink``: capacity the most any owner fits there.

    Simplifications (OUR choices): every runnable task of an owner is treated as having the shape of
    her next task (the owner is the flow node, not each task, so the graph has owners x nodes edges);
    a node's capacity is one number of tasks, so a plan may put more on a node than fits together:
    each offer checks the real fit, launches only what fits (no node is ever over-committed), and
    when a node's planned tasks did not all fit, the flow is solved again (once per node and
    instant) with the room actually left. No preemption, no data locality (Quincy's preferred racks
    and machines). Cost: a min-cost flow per instant with offers (more when plans over-fill nodes),
    in pure Python: for small clusters only.
    """

    name = "quincy"

    def bind(self, state):
        super().bind(state)
        edges = len(state.owners) * state.n_nodes
        if edges > limits.MAX_QUINCY_EDGES:
            raise CaseError(
                f"scheduler: quincy: {len(state.owners)} owners x {state.n_nodes} nodes = {edges} "
                f"flow edges, more than the {limits.MAX_QUINCY_EDGES:,} of its pure-Python flow network "
                "(quincy is for small clusters)"
            )
        self.plan_time = None
        self.plan: dict[int, list[int]] = {}  # node -> owners planned there, in offer order
        self.replanned: set[int] = set()  # nodes planned again in this instant

    def _fit(self, task, node) -> int:
        st = self.state
        room = [
            st.free_cpu[node] / task.cpu if task.cpu > 0 else float("inf"),
            st.free_mem[node] / task.mem if task.mem > 0 else float("inf"),
        ]
        return max(0, int(min(room) + EPS))

    def _make_plan(self):
        import networkx as nx

        st = self.state
        work = {}
        st.steps += len(st.owners) * (1 + st.n_nodes) + len(st.jobs)
        for u in range(len(st.owners)):
            job = st.next_job(u)
            if job is not None:
                runnable = sum(len(j.spec.phases[j.phase]) - j.next for j in st.user_jobs[u].values() if j.runnable())
                work[u] = (job, runnable)
        self.plan = {}
        if not work:
            return
        fits = {
            u: {k: f for k in range(st.n_nodes) if (f := self._fit(job.next_task(), k)) > 0}
            for u, (job, _) in work.items()
        }
        users = list(work)
        demands = [
            (work[u][0].next_task().cpu / st.total_cpu, work[u][0].next_task().mem / st.total_mem) for u in users
        ]
        shares = drf_shares(demands, [work[u][1] + st.running[u] for u in users])
        wait = {u: int(st.time - work[u][0].submit) for u in users}
        above = 1 + max(wait.values())  # the cost of a task above its owner's share
        g = nx.DiGraph()
        total = 0
        for u, d, share in zip(users, demands, shares):
            supply = min(work[u][1], sum(fits[u].values()))
            if supply == 0:
                continue
            total += supply
            quota = max(0, int(share / max(d) + 1e-9) - st.running[u])
            g.add_node(("u", u), demand=-supply)
            g.add_edge(("u", u), "unscheduled", weight=above + 1 + wait[u])
            g.add_edge(("u", u), ("fair", u), capacity=quota, weight=0)
            g.add_edge(("fair", u), ("G", u), weight=0)
            g.add_edge(("u", u), ("G", u), weight=above)
            for k, f in fits[u].items():
                g.add_edge(("G", u), ("node", k), capacity=f, weight=0)
                cap = g.edges[("node", k), "sink"]["capacity"] if g.has_edge(("node", k), "sink") else 0
                g.add_edge(("node", k), "sink", capacity=max(cap, f), weight=0)
        if total == 0:
            return
        g.add_edge("unscheduled", "sink", weight=0)
        g.nodes["sink"]["demand"] = total
        flow = nx.min_cost_flow(g)
        for u in sorted(users, key=lambda u: (st.dominant_share(u), u)):  # on a node: lowest share first
            for (_, k), units in flow.get(("G", u), {}).items():
                self.plan.setdefault(k, []).extend([u] * units)

    def pick(self, state, node):
        if self.plan_time != state.time:
            self.plan_time = state.time
            self.replanned = set()
            self._make_plan()
        while True:
            queue = self.plan.get(node, [])
            declined = False
            while queue:
                u = queue.pop(0)
                job = state.next_job(u)
                if job is not None and state.fits(node, job.next_task()):
                    return job
                declined = True
            if not declined or node in self.replanned:
                return None
            self.replanned.add(node)  # the plan over-filled this node: plan again with the
            self._make_plan()  # room really left, once per node and instant


@register("quincy")
class QuincyMechanism(OnlineMechanism):
    summary = "Quincy-style min-cost flow per instant: DRF quotas first, spare room to the longest waiting"
    about = "Fairness bounds as flow costs, not hard bounds; one flow problem per instant, for small clusters."
    section = "8"

    def offers(self):
        return Quincy()


__all__ = ["Quincy", "QuincyMechanism"]
