"""Every bound on the work one input can cause, in one place.

A file, an option or a request that would pass one of these bounds is refused with one line
(exit code 2) before the work starts, or the work stops at the bound with a clear error; nothing
runs without limit.  The README's "Limits" section lists each bound, its value and what happens
beyond it (``tests/test_limits_documented.py`` keeps the two in step).
"""

# -- input files and messages ---------------------------------------------------------------------
#: a case, workload or trace file larger than this is refused before it is parsed (devices and
#: pipes are read up to this many bytes and then refused)
MAX_FILE_BYTES = 64 * 2**20
#: mappings and lists nested deeper than this are refused (deeper YAML only comes from generators)
MAX_YAML_DEPTH = 64
#: nodes of a YAML document once its aliases are expanded ("billion laughs" documents are refused)
MAX_YAML_NODES = 4_000_000
#: characters of an offending value quoted in an error message
MAX_EXCERPT = 60
#: characters of a resource, user, group or variant name; a longer name, or one that is not
#: printable text on one line (a newline, a NUL), is refused (names appear in every message)
MAX_NAME_CHARS = 200
#: groups above any group of a hierarchy (H-DRF groups, cohorts, parent queues, roles): the
#: policies walk their trees recursively, as the schedulers they model do; a deeper tree is
#: refused when the case, the instance or the queue tree is built
MAX_TREE_DEPTH = 64
#: users x resources x (1 + variants) of a case file: the demands fairalloc builds as dense arrays
#: (a few hundred bytes can name 100,000 users and 100,000 resources); a larger case is refused
#: before any array is built (instances built in Python are not bounded)
MAX_CASE_CELLS = 20_000_000

# -- numbers --------------------------------------------------------------------------------------
#: every non-zero capacity, demand, weight and task bound lies within [MIN_MAGNITUDE, MAX_MAGNITUDE]:
#: beyond, float64 loses digits (subnormals) or a product overflows
MIN_MAGNITUDE = 1e-30
MAX_MAGNITUDE = 1e30
#: within one user, largest / smallest non-zero per-task share (demand / capacity); beyond, the
#: smaller share is below what float64 resolves beside the larger one in a sum
MAX_SHARE_RATIO = 1e12
#: largest / smallest weight in an instance
MAX_WEIGHT_RATIO = 1e12
#: digits of an exact number written as text ("100/31", "2.52e3"), its exponent included, and of
#: an integer in a YAML file; a longer number is refused before it is converted (an exponent
#: beyond 2 * MAX_EXACT_DIGITS is refused as out of range, 0e... reads as 0).  The importers' one
#: numeric gate (``fairalloc.io.quantities.number``) applies these bounds and [MIN_MAGNITUDE,
#: MAX_MAGNITUDE] to every quantity, weight, count and priority a scheduler's file gives
MAX_EXACT_DIGITS = 200

# -- searches and parallel work (checks, verifier, falsifier, claims) -----------------------------
#: evaluations per user of a manipulation search (--budget, a claim's budget)
MAX_BUDGET = 100_000
#: worker processes of falsify / table2 (--workers)
MAX_WORKERS = 64

# -- discrete scheduling and simulation ---
#: launches Algorithm 1 makes on one case (``schedule``, ``schedule --machines``); measured: about
#: 2-5 million launches a second when counting (``--no-trace``), so at most a few seconds. Beyond, the
#: run stops with one line naming the user with the most launches (tiny demands beside the capacity)
MAX_LAUNCHES = 10_000_000
#: launches recorded one by one in a trace (``schedule`` with ``--trace``, Table 1): each is a row
#: of every user's shares, about 15 000 a second; beyond, refused with a hint at ``--no-trace``
MAX_TRACE_LAUNCHES = 100_000
#: launches x users of such a trace (the rows' cells); beyond, refused the same way
MAX_TRACE_CELLS = 2_000_000
#: machines of ``schedule --machines`` (copies included); refused before any placement
MAX_MACHINES = 100_000
#: machines x users of a placement (its per-machine table); refused before any placement
MAX_PLACEMENT_CELLS = 10_000_000
#: nodes of a simulated cluster (``nodes.count``, ``--nodes``): the simulator offers every node
#: when work arrives; refused when the workload is loaded
MAX_NODES = 100_000
#: named resources of a simulated cluster (cpu, mem and the pools' others, ``nodes[k].resources``):
#: every node keeps a free amount of each; refused when the workload is loaded
MAX_SIM_RESOURCES = 64
#: jobs of a workload (as written: resubmitted copies count in MAX_EVENTS); refused when loaded
MAX_JOBS = 100_000
#: owners (users / queues / groups) of a workload: every timeline sample computes their DRF shares
MAX_OWNERS = 10_000
#: tasks of one job (``count`` of a phase, or its list, or an Alibaba row's ``instance_num``)
MAX_TASKS_PER_JOB = 1_000_000
#: tasks of a workload, all jobs together (as written); refused when loaded
MAX_TASKS = 2_000_000
#: events of one simulation (arrivals, deadlines, task finishes), bounded when the workload is
#: loaded: a resubmitting job counts ``(horizon - submit) / (its shortest possible run) + 1``
#: copies; measured 40 000 - 190 000 events a second, so under a minute or so per scheduler.
#: A simulation that still reaches it (a scheduler plug-in) stops there with one line
MAX_EVENTS = 5_000_000
#: scheduler work of one simulation: node offers, plus owners, jobs and heap entries examined to
#: answer them (hundreds of nanoseconds each); beyond, the simulation stops with one line
MAX_SCHEDULER_STEPS = 200_000_000
#: jobs of a job workload replayed against a queue case (``simulate WORKLOAD --case``); refused
#: when the workload is loaded, before the replay starts (a YAML file meets MAX_FILE_BYTES and
#: MAX_YAML_NODES first; a JSON Lines file, one job a line, is refused at the line that passes this)
MAX_WORKLOAD_JOBS = 1_000_000
#: pods of one job of such a workload (they are placed on nodes one by one); refused when loaded
MAX_JOB_PODS = 100_000
#: scheduling cycles at one instant of a replay (a policy is asked again while it decides
#: something); beyond, the replay stops with one line naming the policy and the time
MAX_CYCLES_PER_INSTANT = 10_000
#: jobs shown to a policy over a replay (running and waiting, summed over its cycles): the work
#: the policies do scales with it; beyond, the replay stops with one line
MAX_REPLAY_STEPS = 2_000_000_000
#: timeline samples of a simulation (``samples=``); a run longer than estimated keeps at most
#: twice as many, evenly spaced (every other one is dropped and the interval doubled)
MAX_SAMPLES = 100_000
#: levels of an owner path (``eng/web/alice`` has 3) under ``hdrf``; refused when the run starts
MAX_OWNER_DEPTH = 64
#: owners x nodes of the ``quincy`` scheduler's flow network (pure Python); refused at the start
MAX_QUINCY_EDGES = 100_000
#: usable tasks kept from Google task_events files (``max_tasks``), or generated synthetically
MAX_TRACE_TASKS = 2_000_000
#: lines read from trace files by one call (a gzip bomb of blank or skipped lines included);
#: about 2 microseconds each; beyond, the reading stops with one line
MAX_TRACE_LINES = 20_000_000
#: users of one DMFA-SRQ trial (its pair statistics are quadratic in them)
MAX_TRIAL_USERS = 20_000
#: trials of one sweep (``trial_ids``), counted before any trial runs
MAX_TRIALS = 1_000_000
#: runs of one ``whatif --grid`` (workloads x policies x points, the baseline included): each point's
#: changed case is read and checked (about a millisecond) before the first replay
MAX_WHATIF_RUNS = 10_000
#: bytes of a sweep results file read back to resume; beyond, refused before it is parsed
MAX_SWEEP_FILE_BYTES = 256 * 2**20

# -- commands, properties and the explorer ---
#: users and resources of the random instances of falsify / table2 (--users, --resources)
MAX_SPACE_USERS = 100
MAX_SPACE_RESOURCES = 20
#: alphas of one frontier (tradeoff --alphas)
MAX_ALPHAS = 100
#: seeds (--seed) lie in [0, MAX_SEED]; numpy refuses negative seeds
MAX_SEED = 2**63 - 1
#: work of a search that solves the instance again and again: evaluations x users of the instance
#: (verify and strategy_proofness: budget x users attacked x users; population_monotonicity:
#: users x users).  Measured 0.07 (drf) to 6 (utilitarian LP) microseconds per user per solve, so
#: about a minute at most; beyond, refused before the search starts, with the numbers and a hint
#: (--user, a lower --budget, fewer properties)
MAX_SEARCH_WORK = 20_000_000
#: user pairs x resources compared by envy-freeness (n * n * m), about 0.3 billion a second in
#: blocks of rows; beyond, ``check -p ef`` is refused before any work and ``tradeoff`` reports
#: ``envious_users`` as null (not computed)
MAX_PAIRWISE_CELLS = 1_000_000_000
#: cells (rows x users) of one block of the envy comparison: its memory is two float64 arrays of
#: this size (32 MiB), whatever the number of users
ENVY_BLOCK_CELLS = 2_000_000
#: the explorer (fairalloc explore): bytes of one request body (413 beyond), levels of JSON nesting
#: in it (a case form needs 7), users, resources and groups of one instance, mechanisms of one
#: request, verifier budget of one request, search work of one request (as MAX_SEARCH_WORK, about
#: 15 s at most; 400 beyond)
MAX_REQUEST_BYTES = 2**20
MAX_REQUEST_DEPTH = 32
MAX_EXPLORER_USERS = 50
MAX_EXPLORER_RESOURCES = 16
MAX_EXPLORER_GROUPS = 50
MAX_EXPLORER_MECHANISMS = 8
MAX_EXPLORER_BUDGET = 5000
MAX_EXPLORER_SEARCH_WORK = 1_000_000
#: the explorer computes in worker processes, so that a request can be stopped at its time limit
#: and none waits on a lock another holds: quick requests (check, solve, playback, tree) in one lane
#: of EXPLORER_QUICK_WORKERS processes, each stopped after EXPLORER_QUICK_SECONDS; slow ones
#: (properties, frontier, probe and lie search) in another of EXPLORER_SLOW_WORKERS, stopped after
#: EXPLORER_SLOW_SECONDS (503 then, the worker replaced).  A request waits at most
#: EXPLORER_WAIT_SECONDS for a free worker of its lane (503 beyond)
EXPLORER_QUICK_WORKERS = 2
EXPLORER_SLOW_WORKERS = 2
EXPLORER_QUICK_SECONDS = 10
EXPLORER_SLOW_SECONDS = 60
EXPLORER_WAIT_SECONDS = 10
#: the explorer's HTTP server (waitress, fairalloc/explorer/server.py): EXPLORER_THREADS threads run
#: requests (a complete request waits for a free one; connections are read without them); at most
#: EXPLORER_CONNECTIONS connections open at once (further ones wait in the listen queue); a request's
#: line, headers and body must all arrive within EXPLORER_READ_SECONDS of its first byte, and a
#: connection idle between requests for EXPLORER_IDLE_SECONDS is closed (a slow sender cannot hold
#: a connection); a request line of more than MAX_REQUEST_LINE_BYTES is refused (414), headers of
#: more than MAX_HEADER_BYTES (the request line included) or more than MAX_HEADER_COUNT lines (431)
EXPLORER_THREADS = 16
EXPLORER_CONNECTIONS = 500
EXPLORER_READ_SECONDS = 5
EXPLORER_IDLE_SECONDS = 15
MAX_REQUEST_LINE_BYTES = 8192
MAX_HEADER_BYTES = 32768
MAX_HEADER_COUNT = 100
#: YAML nodes of a case file uploaded to the explorer, aliases expanded, counted from the parser's
#: events before the file is read (a 50-user case with every field has a few thousand); its
#: resources, users and groups are counted then too (MAX_EXPLORER_RESOURCES and so on; 400 beyond).
#: Measured: reading a case of 48,000 nodes (50 users, 16 resources, 1,300 variants) into the
#: page's form takes about 1.3 s, so an upload is bounded well within EXPLORER_QUICK_SECONDS
MAX_EXPLORER_UPLOAD_NODES = 50_000
#: jobs of a workload the explorer replays (``explore CASE --workload W``, its Replay panel; 400
#: beyond, counted before the workload is read, and refused by ``explore`` before it serves): the
#: replay runs in the slow lane, within EXPLORER_SLOW_SECONDS, and the page sends the workload with
#: the case in one request of at most MAX_REQUEST_BYTES (about 100 bytes a job).  Measured on two
#: queues of 8 cpus, 2,000 jobs arriving at about half the capacity: 0.9 (drf) to 4.9 (yunikorn-fair)
#: CPU seconds; a workload that keeps hundreds of jobs waiting costs far more (kueue 10 s,
#: yunikorn-fair beyond the lane's limit, which stops it: 503).  Larger ones: ``simulate --report``
MAX_EXPLORER_WORKLOAD_JOBS = 2_000

# -- solvers and algorithms ---
#: Newton iterations of the dual Newton method (CEEI, alpha-fairness); beyond, SolverError
DUAL_NEWTON_ITERATIONS = 200
#: halvings of one line search of the dual Newton method (2**-1075 underflows to 0, so a finite
#: step has vanished by then); beyond, SolverError.  A NaN anywhere in an iterate is an error at once
LINE_SEARCH_STEPS = 1100
#: whole tasks the H-DRF descent (``hdrf``) launches for one allocation (a run of one user's tasks
#: is launched in batches: about 0.05 s per million); an instance that needs more (one task taking
#: 1e-8 of a resource) is refused before the descent when a lower bound on its launches exceeds
#: this, else with one line when the count reaches it (after about 2.5 s)
MAX_HDRF_LAUNCHES = 50_000_000
#: decisions of the H-DRF descent (a descent from the root launching one task or one batch;
#: about 30 microseconds each): users alternating on tiny tasks are refused at this many (about 10 s)
MAX_HDRF_DECISIONS = 300_000
#: queues x groups of a YuniKorn case (``yunikorn-fair``) with groups where a share jumps (an
#: explicit 0 guarantee or max on a resource a queue below requests): such a tree keeps the knot
#: filling, which grows with both (measured 1 s at 5,000 queues in 10 groups, 5.5 s in 100 groups,
#: 28 s at 10,000 in 100); more are refused before the fill.  Other trees are filled event by
#: event, in time linear in the queues, and not bounded
MAX_YUNIKORN_QUEUE_GROUPS = 500_000
#: users of a dynamic mechanism solved as a program (one LP per arrival, the k-th with k
#: variables: quadratic work); more are refused before the first LP (the fast path has no limit)
MAX_DYNAMIC_PROGRAM_USERS = 2_000
#: alpha of the alpha-fair families' fast path (the dual Newton method's reachable residual grows as
#: 1 / alpha, and its response as s^(-1/alpha)); outside [MIN_FAST_ALPHA, MAX_FAST_ALPHA] (the ends
#: 0, 1 and inf excepted) ``--method fast`` is refused and ``auto`` solves the program
MIN_FAST_ALPHA = 0.01
MAX_FAST_ALPHA = 1000
