#pragma once

#include "model/agent.h"
#include "model/problem.h"
#include "model/target.h"

#include <QList>
#include <QString>

#include <random>

namespace autocomp {

// search.example_rate (Autocomp's name): a model picks, once per parent, the agent's code examples that are
// relevant to the parent's code and the parts of the ISA it uses (LLM call phase "examples"); each picked
// example then goes into a plan prompt with probability example_rate. Pure functions; the engine asks.
class ExampleSelection
{
public:
    static QString phase() { return QStringLiteral("examples"); }
    // The question: the parent's code, the ISA the plan prompts show, and the examples numbered 1..n by
    // name and summary (no code). Ends "Relevant examples:".
    static QString prompt(const QList<CodeExample> &examples, const Problem &problem, const Target &target,
                          const QString &code, const QString &isaDocs);
    // The picked examples (0-based), from an answer that lists numbers ("none": none).
    static QList<int> parse(const QString &answer, int count);
    // The picked examples kept for one plan prompt: each with probability `rate`, in the agent's order.
    static QList<CodeExample> sample(const QList<CodeExample> &examples, const QList<int> &picked, double rate,
                                     std::mt19937_64 &rng);
};

} // namespace autocomp
