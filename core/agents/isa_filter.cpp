#include "agents/isa_filter.h"

#include <QHash>
#include <QRegularExpression>

namespace autocomp {

QList<IsaFilter::Section> IsaFilter::parse(const QString &isaDocs)
{
    QList<Section> out;
    bool fence = false;
    for (const QString &line : isaDocs.split(QLatin1Char('\n'))) {
        if (line.trimmed().startsWith(QLatin1String("```")))
            fence = !fence;
        if (!fence && line.startsWith(QLatin1String("## "))) {
            out << Section{line.mid(3).trimmed(), {}, {}};
            continue;
        }
        if (out.isEmpty())
            continue;
        Section &section = out.last();
        if (!fence && line.startsWith(QLatin1String("### "))) {
            section.entries << Entry{line.mid(4).trimmed(), {}};
            continue;
        }
        QString &text = section.entries.isEmpty() ? section.intro : section.entries.last().body;
        text += line + QLatin1Char('\n');
    }
    return out;
}

QString IsaFilter::sectionPrompt(const QList<Section> &sections, const QString &problem, const QString &code)
{
    QString list;
    for (int i = 0; i < sections.size(); ++i) {
        QStringList entries;
        for (const Entry &e : sections.at(i).entries)
            entries << e.title;
        list += QStringLiteral("%1. %2").arg(i + 1).arg(sections.at(i).title);
        if (!entries.isEmpty())
            list += QStringLiteral(" (") + entries.join(QStringLiteral("; ")).left(300) + QLatin1Char(')');
        list += QLatin1Char('\n');
    }
    return QStringLiteral(
               "Task: choose the sections of the programming interface (ISA) documentation that are relevant to "
               "optimizing the code below.\n\n## Problem\n\n%1\n\n## Code\n\n```\n%2\n```\n\n## Sections\n\n%3\n"
               "Answer with the numbers of the relevant sections separated by commas (for example `1, 3`), or "
               "`none`.\nRelevant sections:")
        .arg(problem.trimmed(), code.trimmed(), list);
}

QString IsaFilter::entryPrompt(const Section &section, const QString &problem, const QString &code)
{
    QString list;
    for (int i = 0; i < section.entries.size(); ++i)
        list += QStringLiteral("%1. %2\n").arg(i + 1).arg(section.entries.at(i).title);
    return QStringLiteral(
               "Task: choose the entries of the ISA section \"%1\" that are relevant to optimizing the code below.\n\n"
               "## Problem\n\n%2\n\n## Code\n\n```\n%3\n```\n\n## Entries\n\n%4\n"
               "Answer with the numbers of the relevant entries separated by commas (for example `2, 5`), or "
               "`none`.\nRelevant entries:")
        .arg(section.title, problem.trimmed(), code.trimmed(), list);
}

QList<int> IsaFilter::parseNumbers(const QString &answer, int count)
{
    QList<int> out;
    static const QRegularExpression s_number(QStringLiteral("\\b(\\d+)\\b"));
    for (auto it = s_number.globalMatch(answer); it.hasNext();) {
        const int n = it.next().captured(1).toInt();
        if (n >= 1 && n <= count && !out.contains(n))
            out << n;
    }
    return out;
}

QString IsaFilter::assemble(const QList<Section> &sections, const QList<int> &keptSections,
                            const QHash<int, QList<int>> &keptEntries)
{
    QStringList titles;
    for (int s : keptSections)
        titles << sections.at(s).title;
    QString out = QStringLiteral(
                      "Only the parts relevant to the current code are shown (kept %1 of %2 sections: %3).\n\n")
                      .arg(keptSections.size())
                      .arg(sections.size())
                      .arg(titles.isEmpty() ? QStringLiteral("none") : titles.join(QStringLiteral(", ")));
    for (int s : keptSections) {
        const Section &section = sections.at(s);
        out += QStringLiteral("## ") + section.title + QLatin1Char('\n') + section.intro;
        const auto kept = keptEntries.constFind(s);
        for (int e = 0; e < section.entries.size(); ++e)
            if (kept == keptEntries.cend() || kept->contains(e))
                out += QStringLiteral("### ") + section.entries.at(e).title + QLatin1Char('\n')
                    + section.entries.at(e).body;
    }
    return out.trimmed() + QLatin1Char('\n');
}

} // namespace autocomp
