#include "search/example_selection.h"

#include "agents/isa_filter.h"

#include <algorithm>

namespace autocomp {

QString ExampleSelection::prompt(const QList<CodeExample> &examples, const Problem &problem, const Target &target,
                                 const QString &code, const QString &isaDocs)
{
    QString out;
    if (!isaDocs.trimmed().isEmpty())
        out += QStringLiteral("## Programming interface (ISA)\n\n") + isaDocs.trimmed() + QStringLiteral("\n\n");
    out += QStringLiteral("## Problem: %1\n\n%2\n\n").arg(problem.name, problem.description.trimmed());
    out += QStringLiteral("## Current code\n\n```%1\n%2\n```\n\n").arg(target.language, code.trimmed());
    out += QStringLiteral("## Code examples\n\n");
    for (qsizetype i = 0; i < examples.size(); ++i) {
        const CodeExample &e = examples.at(i);
        out += QStringLiteral("%1. %2").arg(i + 1).arg(e.name);
        if (!e.summary.isEmpty())
            out += QStringLiteral(": ") + e.summary;
        out += QLatin1Char('\n');
    }
    out += QStringLiteral(
        "\n## Instruction\n\n"
        "Which of these examples show patterns that are relevant to optimizing the current code, given the parts "
        "of the programming interface it uses? Answer with their numbers separated by commas, or `none`.\n\n"
        "Relevant examples:");
    return out;
}

QList<int> ExampleSelection::parse(const QString &answer, int count)
{
    QList<int> out;
    for (int n : IsaFilter::parseNumbers(answer, count))
        out << n - 1;
    std::sort(out.begin(), out.end());
    return out;
}

QList<CodeExample> ExampleSelection::sample(const QList<CodeExample> &examples, const QList<int> &picked, double rate,
                                            std::mt19937_64 &rng)
{
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    QList<CodeExample> out;
    for (int index : picked)
        if (index >= 0 && index < examples.size() && uniform(rng) < rate)
            out << examples.at(index);
    return out;
}

} // namespace autocomp
