#pragma once

#include <QHash>
#include <QList>
#include <QString>
#include <QStringList>

namespace autocomp {

// Autocomp's run-time ISA filter (search.isa_filter): a model picks the `##` sections of an agent's
// isa_docs.md relevant to the code at hand, then the relevant `###` entries of each; only those go into
// the plan prompt. Pure functions; the engine sends the questions.
class IsaFilter
{
public:
    struct Entry
    {
        QString title; // the `###` line's text
        QString body;
    };
    struct Section
    {
        QString title; // the `##` line's text
        QString intro; // text before its first entry
        QList<Entry> entries;
    };

    // The `##` sections of a document (text before the first one is dropped); `###` inside code fences
    // are text, not entries.
    static QList<Section> parse(const QString &isaDocs);
    // Asks which sections matter, by number.
    static QString sectionPrompt(const QList<Section> &sections, const QString &problem, const QString &code);
    // Asks which entries of one section matter, by number.
    static QString entryPrompt(const Section &section, const QString &problem, const QString &code);
    // The numbers (1-based, within 1..count) an answer lists, in order, without repeats; "none" gives none,
    // and so does an answer with no number in range.
    static QList<int> parseNumbers(const QString &answer, int count);
    // The kept sections (0-based) with, for each, the kept entries (0-based; a section missing from
    // `entries` keeps all of its entries), headed by a line that says what was kept.
    static QString assemble(const QList<Section> &sections, const QList<int> &keptSections,
                            const QHash<int, QList<int>> &keptEntries);
};

} // namespace autocomp
