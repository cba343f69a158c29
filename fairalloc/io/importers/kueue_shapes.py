"""The shapes of the objects the Kueue importer reads (:mod:`.kueue`, :mod:`.kueue_workloads`).

Source read: kubernetes-sigs/kueue at commit ff69552e79ad21652c36caa97038382e55625cf7 (Apache-2.0):
``apis/kueue/v1beta1`` and ``apis/kueue/v1beta2`` (``clusterqueue_types.go``, ``cohort_types.go``,
``localqueue_types.go``, ``resourceflavor_types.go``, ``workload_types.go``,
``fairsharing_types.go``), the v1alpha1 Cohort of ``apis/kueue/v1alpha1/cohort_types.go`` at
20531c6177c542d9de2becba4beeb5beff8d87fc (before "Promote Cohort API to v1beta1", #5595), and the
manager's ``apis/config/v1beta1/configuration_types.go``; for the objects of Kueue's integrations,
the fields ``pkg/controller/jobs`` reads of them (``job/job_controller.go``,
``deployment/deployment_webhook.go``, ``statefulset/statefulset_webhook.go``,
``leaderworkerset/leaderworkerset_reconciler.go``, ``podSets``), spelled as k8s.io/api ``batch/v1``
and ``apps/v1`` and kubernetes-sigs/lws ``api/leaderworkerset/v1`` write them.  Field names are
the JSON names of those Go types; only the fields the importer reads are declared (:mod:`.shapes`:
the others are kept and warned about by the importer).

Quantities, counts and weights stay ``Any``: they go through the numeric gate
(:func:`fairalloc.io.quantities.parse_kube`, :func:`fairalloc.io.importers.kueue_workloads.count`),
which says what is wrong with a number in the importer's words.  Booleans Kueue reads as switches
(``active``, ``suspend``, ``fairSharing.enable``) are strict: ``"false"`` is not read as false.
"""

from __future__ import annotations

from typing import Any

from pydantic import StrictBool

from fairalloc.io.importers import shapes
from fairalloc.io.importers.shapes import Items, Maybe, ObjectMeta, Shape, Table

__all__ = [
    "ClusterQueue",
    "Cohort",
    "LocalQueue",
    "ResourceFlavor",
    "Workload",
    "PodSet",
    "PodTemplate",
    "Pod",
    "Configuration",
    "ConfigMap",
    "Job",
    "Deployment",
    "LeaderWorkerSet",
    "Replicated",
]


# -- what a pod asks of a flavor -----------------------------------------------------------------
class Taint(Shape):
    """``corev1.Taint`` (a ResourceFlavor's ``nodeTaints``)."""

    key: Maybe = None
    value: Maybe = None
    effect: Maybe = None


class Toleration(Shape):
    """``corev1.Toleration`` (a pod's or a ResourceFlavor's ``tolerations``)."""

    key: Maybe = None
    operator: Maybe = None
    value: Maybe = None
    effect: Maybe = None


class PodSpec(shapes.PodSpec):
    """The core ``PodSpec`` plus what ``checkFlavorForPodSets`` (``flavorassigner.go``) reads of it:
    ``tolerations``, ``nodeSelector`` and ``affinity`` (read as written: ``affinity_keys``)."""

    tolerations: Items[Toleration] = []
    nodeSelector: Table[Maybe] = {}
    affinity: Table[Any] = {}


class PodTemplate(shapes.PodTemplate):
    """A ``PodTemplateSpec`` whose spec is read by the flavor assigner too (:class:`PodSpec`)."""

    spec: PodSpec = PodSpec()


class Pod(shapes.Pod):
    """A Pod of Kueue's pod integration, its spec read as a pod set's (:class:`PodSpec`)."""

    spec: PodSpec = PodSpec()


# -- quotas ---------------------------------------------------------------------------------------
class Quota(Shape):
    """``ResourceQuota`` of ``clusterqueue_types.go``: one resource's quotas in one flavor."""

    name: Any = None  # a resource name, refused by the importer in its own words when not text
    nominalQuota: Any = None
    borrowingLimit: Any = None
    lendingLimit: Any = None


class FlavorQuotas(Shape):
    """``FlavorQuotas`` of ``clusterqueue_types.go``."""

    name: Any = None  # as Quota.name
    resources: Items[Quota] = []


class ResourceGroup(Shape):
    """``ResourceGroup`` of ``clusterqueue_types.go``."""

    coveredResources: Items[str] = []
    flavors: Items[FlavorQuotas] = []


class FairSharing(Shape):
    """``FairSharing`` of ``fairsharing_types.go``: ``weight`` is a quantity."""

    weight: Any = None


class BorrowWithinCohort(Shape):
    """``BorrowWithinCohort`` of ``clusterqueue_types.go``."""

    policy: Maybe = None
    maxPriorityThreshold: Any = None


class Preemption(Shape):
    """``ClusterQueuePreemption`` of ``clusterqueue_types.go``."""

    reclaimWithinCohort: Maybe = None
    withinClusterQueue: Maybe = None
    borrowWithinCohort: BorrowWithinCohort | None = None


class ClusterQueueSpec(Shape):
    """``ClusterQueueSpec``: ``cohort`` in v1beta1, ``cohortName`` in v1beta2.  ``flavorFungibility``
    is a mapping whose settings the importer checks against the ones it knows (a warning)."""

    resourceGroups: Items[ResourceGroup] = []
    cohort: Maybe = None
    cohortName: Maybe = None
    fairSharing: FairSharing | None = None
    flavorFungibility: Table[Any] = {}
    preemption: Preemption = Preemption()
    queueingStrategy: Maybe = None
    stopPolicy: Maybe = None
    concurrentAdmissionPolicy: Any = None


class ClusterQueue(Shape):
    """``ClusterQueue`` of ``clusterqueue_types.go`` (its ``status`` is not read)."""

    metadata: ObjectMeta = ObjectMeta()
    spec: ClusterQueueSpec = ClusterQueueSpec()


class CohortSpec(Shape):
    """``CohortSpec``: ``parentName`` in v1beta1 and v1beta2, ``parent`` in v1alpha1."""

    parentName: Maybe = None
    parent: Maybe = None
    resourceGroups: Items[ResourceGroup] = []
    fairSharing: FairSharing | None = None


class Cohort(Shape):
    metadata: ObjectMeta = ObjectMeta()
    spec: CohortSpec = CohortSpec()


class LocalQueueSpec(Shape):
    """``LocalQueueSpec`` of ``localqueue_types.go``."""

    clusterQueue: Maybe = None
    stopPolicy: Maybe = None
    fairSharing: FairSharing | None = None


class LocalQueue(Shape):
    metadata: ObjectMeta = ObjectMeta()
    spec: LocalQueueSpec = LocalQueueSpec()


class ResourceFlavorSpec(Shape):
    """``ResourceFlavorSpec`` of ``resourceflavor_types.go``."""

    nodeLabels: Table[Maybe] = {}
    nodeTaints: Items[Taint] = []
    tolerations: Items[Toleration] = []
    topologyName: Maybe = None


class ResourceFlavor(Shape):
    metadata: ObjectMeta = ObjectMeta()
    spec: ResourceFlavorSpec = ResourceFlavorSpec()


# -- workloads ------------------------------------------------------------------------------------
class PodSet(Shape):
    """``PodSet`` of ``workload_types.go``: ``count`` pods of ``template``."""

    name: Maybe = None
    count: Any = 1
    template: PodTemplate = PodTemplate()


class WorkloadSpec(Shape):
    """``WorkloadSpec`` of ``workload_types.go``."""

    podSets: Items[PodSet] = []
    queueName: Maybe = None
    priorityClassName: Maybe = None
    priority: Any = None
    active: StrictBool | None = None


class PodSetAssignment(Shape):
    """``PodSetAssignment``: the flavor of each resource, what Kueue charged, for how many pods."""

    name: Maybe = None
    flavors: Table[Maybe] = {}
    resourceUsage: Table[Any] = {}
    count: Any = None


class Admission(Shape):
    """``Admission`` of ``workload_types.go``."""

    clusterQueue: Maybe = None
    podSetAssignments: Items[PodSetAssignment] = []


class Condition(Shape):
    """``metav1.Condition``: ``status`` is ``"True"`` (read as written: YAML may give ``true``)."""

    type: Maybe = None
    status: Any = None


class ReclaimablePod(Shape):
    name: Maybe = None
    count: Any = None


class WorkloadStatus(Shape):
    conditions: Items[Condition] = []
    admission: Admission | None = None
    reclaimablePods: Items[ReclaimablePod] = []


class Workload(Shape):
    metadata: ObjectMeta = ObjectMeta()
    spec: WorkloadSpec = WorkloadSpec()
    status: WorkloadStatus = WorkloadStatus()


# -- the manager's Configuration ------------------------------------------------------------------
class FairSharingConfig(Shape):
    """``FairSharing`` of ``configuration_types.go`` (``enable`` is v1beta1's: in v1beta2 the
    section's presence turns fair sharing on)."""

    enable: StrictBool | None = None
    preemptionStrategies: Any = None


class Resources(Shape):
    """``Resources`` of ``configuration_types.go``: what it would change of the requests."""

    transformations: Items[Any] = []
    excludeResourcePrefixes: Items[Any] = []
    deviceClassMappings: Items[Any] = []


class Configuration(Shape):
    """Kueue's manager ``Configuration`` (``config.kueue.x-k8s.io``)."""

    fairSharing: FairSharingConfig | None = None
    resources: Resources = Resources()


class ConfigMap(Shape):
    """The ConfigMap holding the Configuration in ``data["controller_manager_config.yaml"]``."""

    metadata: ObjectMeta = ObjectMeta()
    data: Table[Any] = {}


# -- the objects of Kueue's job integrations (kueue_workloads) ------------------------------------
class JobSpec(Shape):
    """``batch/v1`` ``JobSpec``: ``parallelism`` pods of ``template``, fewer when ``completions`` is."""

    parallelism: Any = 1
    completions: Any = None
    suspend: StrictBool | None = None
    template: PodTemplate = PodTemplate()


class Job(Shape):
    metadata: ObjectMeta = ObjectMeta()
    spec: JobSpec = JobSpec()


class ReplicatedSpec(Shape):
    """``apps/v1`` ``DeploymentSpec`` and ``StatefulSetSpec``: ``replicas`` pods of ``template``."""

    replicas: Any = 1
    template: PodTemplate = PodTemplate()


class ReplicatedStatus(Shape):
    readyReplicas: Any = 0


class Replicated(Shape):
    """A Deployment or a StatefulSet."""

    metadata: ObjectMeta = ObjectMeta()
    spec: ReplicatedSpec = ReplicatedSpec()
    status: ReplicatedStatus = ReplicatedStatus()


#: a Deployment is read as one
Deployment = Replicated


class LeaderWorkerTemplate(Shape):
    """``LeaderWorkerTemplate`` of a LeaderWorkerSet, as ``leaderworkerset_reconciler.go``
    (``podSets``) reads it: groups of ``size`` pods, the first of ``leaderTemplate`` when given."""

    size: Any = 1
    workerTemplate: PodTemplate = PodTemplate()
    leaderTemplate: PodTemplate | None = None


class LeaderWorkerSetSpec(Shape):
    replicas: Any = 1
    leaderWorkerTemplate: LeaderWorkerTemplate = LeaderWorkerTemplate()


class LeaderWorkerSet(Shape):
    metadata: ObjectMeta = ObjectMeta()
    spec: LeaderWorkerSetSpec = LeaderWorkerSetSpec()
    status: ReplicatedStatus = ReplicatedStatus()
