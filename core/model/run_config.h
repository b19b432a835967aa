#pragma once

#include <QList>
#include <QMetaType>
#include <QString>
#include <QStringList>

#include <optional>

namespace autocomp {

struct SearchConfig {
    int iterations = 8;
    int beamWidth = 4;
    int plansPerParent = 4;
    int codePerPlan = 2;
    double menuDropout = 0.75;     // probability that a menu item is dropped from one plan prompt
    double newIdeaProbability = 0.1;
    int fixAttempts = 1;
    QList<double> parentSlack{1.1, 1.1, 1.0}; // last value repeats
    quint64 seed = 1111;
    int translateIters = 0;
    double translateThreshold = 9;   // 0-10 completeness a translated candidate needs to enter the beam
    bool editMode = false;
    bool feedback = true;            // the evaluator's hardware feedback lines go into plan prompts
    // Autocomp's run-time ISA filter: before each plan prompt a model picks the relevant `##` sections of the
    // agent's isa_docs.md, then the relevant `###` entries of those, and only they go into the prompt.
    bool isaFilter = false;
    std::optional<double> earlyStop; // minimum improvement ratio per iteration
    int earlyStopPatience = 2;
    QString schedule;                // run id or file

    double slackFor(int iteration) const; // iteration is 1-based
};

struct BudgetConfig {
    std::optional<double> maxUsd;
    std::optional<qint64> maxLlmCalls;
    std::optional<double> maxHours;
};

struct EvaluationConfig {
    QString executor = QStringLiteral("local");
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
struct LlmConfig {
    // An answer longer than this is cut off and the call fails with the reason; it is never forwarded.
    qint64 maxAnswerBytes = 4 * 1024 * 1024;
    // A prompt longer than this is not sent (e.g. one built around a huge plan); the call fails with the reason.
    qint64 maxPromptBytes = 2 * 1024 * 1024;
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
struct RunConfig {
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
