#pragma once

#include "model/agent.h"
#include "model/candidate.h"
#include "model/problem.h"
#include "model/target.h"

#include <QList>
#include <QPair>
#include <QString>

#include <optional>

namespace autocomp {

// One menu entry as shown to the planner: its 1-based number in the full menu and its text.
using MenuEntry = QPair<int, QString>;

struct PlanPromptInput
{
    const Agent *agent = nullptr;
    const Problem *problem = nullptr;
    const Target *target = nullptr;
    const Candidate *parent = nullptr;
    QList<MenuEntry> menu; // after dropout
    QList<CodeExample> examples; // after sampling
    bool inviteNewIdea = false;
    bool feedback = true; // include the parent's hardware feedback lines
    bool translation = false; // translation phase: the menu is the translation menu
    QString forcedItem; // schedule reuse: the step must apply this item
    std::optional<QString> isaDocs; // the ISA after the run-time filter; nullopt: the agent's whole ISA
    int iteration = 1;
    int iterations = 1;
    // search.skip_planning: the same prompt asks for the code itself (reasoning first, then the chosen
    // item's line, then the complete code) instead of a plan; it ends "Reasoning and code:".
    bool direct = false;
    bool editMode = false; // with direct: the code as edits to the current code
};

// Builds the prompts of the method (DESIGN.md §1). Pure functions of their inputs: the same inputs
// give the same text, which keeps request hashes stable for caching and resume.
class PromptBuilder
{
public:
    static QString systemPrompt(const Target &target);
    static QString planPrompt(const PlanPromptInput &input);
    static QString codePrompt(const Agent &agent, const Problem &problem, const Target &target,
                              const QString &parentCode, const QString &plan, bool editMode = false);
    // Translation phase: asks for a 0-10 completeness score of a translated candidate.
    static QString translationScorePrompt(const Problem &problem, const Target &target, const QString &code);
    static QString fixPrompt(const Agent &agent, const Problem &problem, const Target &target,
                             const QString &failedCode, const QString &plan, const QString &errorLog);

    // "latency_ms: median 1.23 ms (mean 1.25, min 1.20, p99 1.40, n=57); gflops: 88.1 GFLOP/s"
    // `primaryUnit`: the target's declared unit for primaryMetric (backend.yaml `unit:`).
    static QString describeMetrics(const QJsonObject &metrics, const QString &primaryMetric,
                                   const QString &primaryUnit = QString());
    // The menu entries a plan prompt written by planPrompt() offered (after dropout), in order; empty when
    // the text has no menu section (e.g. a prompt imported from another tool).
    static QStringList offeredMenu(const QString &planPrompt);
    // A strategy's name in a few words, for graph nodes and chart axes: the text before a leading
    // "name:" when there is one, else its first clause, cut at a word boundary to about `maxChars`.
    static QString shortName(const QString &strategy, int maxChars = 28);
    // Cuts each line to `lineLimit` characters and the whole to `maxLines` lines (head and tail kept).
    static QString trimLog(const QString &log, int lineLimit = 400, int maxLines = 80);
};

} // namespace autocomp
