#pragma once

#include <QList>
#include <QMap>
#include <QMetaType>
#include <QString>
#include <QStringList>

#include <optional>

namespace autocomp {

struct SearchConfig
{
    int iterations = 8;
    int beamWidth = 4;
    int plansPerParent = 4;
    int codePerPlan = 2;
    double menuDropout = 0.75; // probability that a menu item is dropped from one plan prompt
    double newIdeaProbability = 0.1;
    int fixAttempts = 1;
    QList<double> parentSlack{1.1, 1.1, 1.0}; // last value repeats
    quint64 seed = 1111;
    int translateIters = 0;
    double translateThreshold = 9; // 0-10 completeness a translated candidate needs to enter the beam
    // translate_score (Autocomp's name): during translation iterations a model scores each correct translated
    // candidate 0-10 for completeness; only those at translateThreshold or above enter the beam, and translation
    // ends early once every beam candidate is there. false: no score calls; translation runs translate_iters.
    bool translateScore = true;
    // translate_perf_threshold: during translation a candidate may be up to this many times slower than its
    // parent and still enter the beam (Autocomp's default 15). No effect outside translation.
    double translatePerfThreshold = 15;
    // skip_planning: one call per prompt writes the code directly (reasoning first, the menu still shown);
    // plansPerParent is then the number of distinct prompts per parent and codePerPlan the samples per prompt.
    bool skipPlanning = false;
    // menu_strategy: empty (the agent's menu only) or "one-shot": before planning for a parent, one call asks
    // a model for about 10 new strategies for its code; they join that parent's menu before dropout.
    QString menuStrategy;
    // example_rate: set, a model first picks the agent's code examples relevant to the parent's code and ISA
    // (once per parent), and each picked one goes into a plan prompt with this probability. Unset: every
    // example goes in with probability 0.25, no model involved.
    std::optional<double> exampleRate;
    bool editMode = false;
    bool feedback = true; // the evaluator's hardware feedback lines go into plan prompts
    // Autocomp's run-time ISA filter: before each plan prompt a model picks the relevant `##` sections of the
    // agent's isa_docs.md, then the relevant `###` entries of those, and only they go into the prompt.
    bool isaFilter = false;
    std::optional<double> earlyStop; // minimum improvement ratio per iteration
    int earlyStopPatience = 2;
    // Overrides the target's noise_floor (backend.yaml): the fraction by which separate evaluations of the
    // same code differ here, beyond one evaluation's interval. Unset: the target's.
    std::optional<double> noiseFloor;
    QString schedule; // run id or file

    double slackFor(int iteration) const; // iteration is 1-based
};

struct BudgetConfig
{
    std::optional<double> maxUsd;
    std::optional<qint64> maxLlmCalls;
    std::optional<double> maxHours;
};

// One SSH host of `evaluation.hosts`: "user@host:port" or {host, user, port, slots}.
struct RemoteHost
{
    QString host;
    QString user; // empty: ssh's default (the local user, or ~/.ssh/config)
    int port = 22;
    int slots = 1; // evaluations it runs at once
    QString label() const;
};

struct EvaluationConfig
{
    // Where evaluations run: local (this machine), ssh (evaluation.hosts over OpenSSH) or slurm
    // (batch jobs of evaluation.slurm). Remote evaluations run `autocomp eval` on the far side, whose
    // trusted judge steps give the verdict exactly as they do here.
    QString executor = QStringLiteral("local");
    QList<RemoteHost> hosts;
    QString sshKnownHosts; // ssh.known_hosts: checked strictly (StrictHostKeyChecking=yes); empty: ~/.ssh/known_hosts
    QString sshIdentity; // ssh.identity: a key file handed to ssh -i; empty: the agent / ssh's defaults. Never read or
                         // stored by us
    int sshConnectTimeoutS = 10;
    QString remoteCommand = QStringLiteral("autocomp"); // remote.command: the autocomp CLI on the host or node
    QString remoteWorkdir = QStringLiteral(
        "/tmp"); // remote.workdir (ssh): absolute; per-candidate dirs are made and removed there
    int remoteRetries =
        2; // remote.retries: a remote failure (host down, job lost) is retried on another slot this often
    QString slurmPartition; // slurm.partition
    QString slurmGres; // slurm.gres, e.g. gpu:1
    QString slurmTime; // slurm.time (sbatch --time); empty: from the target's step timeouts
    QString slurmMem; // slurm.mem, e.g. 4G
    int slurmSlots = 4; // slurm.slots: jobs in the queue at once
    QString slurmSharedDir; // slurm.shared_dir: a directory the nodes see at the same path; empty: the cache dir
    int slurmPollMs = 1000; // slurm.poll_ms: how often squeue is asked
    // slurm.batch: up to this many candidates of one target and problem share a job when more are
    // ready than there are free slots (one sbatch and one start-up for several evaluations);
    // 1: a job per candidate.
    int slurmBatch = 1;
    // slurm.batch_wait_ms: a slot that is free waits this long for a batch to fill before it takes fewer.
    int slurmBatchWaitMs = 0;
    // slurm.cpus: sbatch --cpus-per-task, and how many candidates of a batch a job evaluates at once.
    int slurmCpus = 1;
    // placement: {<target>: remote | compile_local | local}: with compile_local every step up to the
    // target's last compile step runs here and the rest on the executor's host; default remote.
    QMap<QString, QString> placement;
    QString placementFor(const QString &target) const;
    int parallelCompiles = 0; // 0: number of cores
    int benchSlots = 1;
    // How a benchmark is kept apart from our other work: "cpu" gives it a CPU of its own while compiles go
    // on beside it; "exclusive" runs nothing else meanwhile (the other cores still share the last-level
    // cache and memory bandwidth); "auto" is cpu whenever there are more CPUs than bench slots. On the 2-core
    // test VM exclusive measured no steadier than cpu (see the eval_noise benchmark) and cost throughput.
    QString benchIsolation = QStringLiteral("auto");
    QString sandbox = QStringLiteral("auto"); // auto | off | required
    bool keepWorkdirs = false;
    // Steps of a target marked `option: profile` run only when this is on: on the cpu target, one call
    // of each candidate under callgrind's cache simulation (D1/LL miss rates and the instruction
    // count in the planner's feedback). Slow: a few seconds to minutes per candidate.
    bool profile = false;
    // Leave out the steps that need the target's hardware (a GPU): candidates are compiled (and get the
    // compiler's static feedback) but not run, and end with the status no_hardware. A run on a target
    // whose hardware is absent starts only with this on.
    bool compileOnly = false;
};

// Limits and reuse of LLM answers (the `llm:` section).
struct LlmConfig
{
    // An answer longer than this is cut off and the call fails with the reason; it is never forwarded.
    qint64 maxAnswerBytes = 4 * 1024 * 1024;
    // A prompt longer than this is not sent (e.g. one built around a huge plan); the call fails with the reason.
    qint64 maxPromptBytes = 2 * 1024 * 1024;
    // The output-token limit of every request (max_tokens, max_output_tokens, maxOutputTokens): an answer
    // the provider stops there is reported as cut, with this setting named.
    int maxTokens = 8192;
    // Answers are reused per run and position (a resumed run pays nothing twice). With true, an answer paid
    // for in another run to the same request is reused too (replays, tests): `reuse_answers: across_runs`.
    bool reuseAcrossRuns = false;
    // A request whose answer broke after it may have reached the provider (billed) is sent again only with true.
    bool resendBilled = false;
    // The HTTP proxy for LLM requests: empty for the system's (http_proxy, https_proxy, no_proxy), "none",
    // or http://host:port / socks5://host:port. One per process: the first run that names one sets it.
    QString proxy;
};

// A run configuration (DESIGN.md §8), shared by the CLI and the GUI.
struct RunConfig
{
    QString target = QStringLiteral("cpu");
    QString problem;
    QString agent;
    QStringList planModels;
    QStringList codeModels; // empty: same as planModels
    SearchConfig search;
    BudgetConfig budget;
    EvaluationConfig evaluation;
    LlmConfig llm;

    QStringList effectiveCodeModels() const { return codeModels.isEmpty() ? planModels : codeModels; }
    QString effectiveAgent() const { return agent.isEmpty() ? target : agent; }

    // Parses YAML. Errors name `fileName`, the line and the key; unknown keys are errors.
    static std::optional<RunConfig> fromYaml(const QByteArray &yaml, const QString &fileName, QStringList *errors);
    static std::optional<RunConfig> fromFile(const QString &path, QStringList *errors);
    QByteArray toYaml() const;
    // Semantic checks (ranges, non-empty model lists). Empty list: valid.
    QStringList validate() const;
};

} // namespace autocomp

Q_DECLARE_METATYPE(autocomp::RunConfig)
