#include "search/menu_strategy.h"

#include <QRegularExpression>
#include <QSet>

namespace autocomp {

namespace {

const QLatin1String s_menuHeading("## Current menu\n\n");

QString key(const QString &item) { return item.simplified().toCaseFolded(); }

} // namespace

QString MenuStrategy::oneShotPrompt(const Agent &agent, const Problem &problem, const Target &target,
                                    const QString &code, const QStringList &menu, const QString &isaDocs)
{
    QString out;
    if (!agent.architecture.trimmed().isEmpty())
        out += QStringLiteral("## Architecture\n\n") + agent.architecture.trimmed() + QStringLiteral("\n\n");
    if (!isaDocs.trimmed().isEmpty())
        out += QStringLiteral("## Programming interface (ISA)\n\n") + isaDocs.trimmed() + QStringLiteral("\n\n");
    out += QStringLiteral("## Problem: %1\n\n%2\n\n").arg(problem.name, problem.description.trimmed());
    out += QStringLiteral("## Current code\n\n```%1\n%2\n```\n\n").arg(target.language, code.trimmed());
    out += s_menuHeading;
    for (const QString &item : menu)
        out += QStringLiteral("- ") + QString(item).replace(QLatin1Char('\n'), QLatin1Char(' ')) + QLatin1Char('\n');
    out += QStringLiteral(
        "\n## Instruction\n\n"
        "Propose about 10 new optimization strategies for this code on this hardware that are not on the menu "
        "above: each one a specific, self-contained change, written in one line. Put them between <strategies> "
        "and </strategies>, one per line, and write nothing else between the tags.\n\n"
        "New strategies:");
    return out;
}

QStringList MenuStrategy::menuOf(const QString &prompt)
{
    const qsizetype at = prompt.lastIndexOf(s_menuHeading);
    if (at < 0)
        return {};
    const qsizetype start = at + s_menuHeading.size();
    qsizetype end = prompt.indexOf(QLatin1String("\n\n## "), start);
    if (end < 0)
        end = prompt.size();
    QStringList out;
    for (const QString &line : prompt.mid(start, end - start).split(QLatin1Char('\n')))
        if (line.startsWith(QLatin1String("- ")))
            out << line.mid(2);
    return out;
}

QStringList MenuStrategy::parse(const QString &answer, const QStringList &menu)
{
    const qsizetype open = answer.lastIndexOf(QLatin1String("<strategies>"));
    if (open < 0)
        return {};
    const qsizetype start = open + int(sizeof("<strategies>") - 1);
    qsizetype end = answer.indexOf(QLatin1String("</strategies>"), start);
    if (end < 0)
        end = answer.size();
    QSet<QString> seen;
    for (const QString &item : menu)
        seen.insert(key(item));
    static const QRegularExpression s_marker(QStringLiteral("^\\s*(?:[-*\\x{2022}]|\\d+[.)])\\s*"));
    QStringList out;
    for (QString line : answer.mid(start, end - start).split(QLatin1Char('\n'))) {
        line.remove(s_marker);
        line = line.trimmed();
        if (line.isEmpty() || seen.contains(key(line)))
            continue;
        seen.insert(key(line));
        out << line;
        if (out.size() >= 20)
            break;
    }
    return out;
}

} // namespace autocomp
