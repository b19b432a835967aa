#include "agents/edit_applier.h"

#include <QStringList>

namespace autocomp {

QList<EditApplier::Edit> EditApplier::parse(const QString &response)
{
    QList<Edit> edits;
    enum { Outside, Search, Replace } state = Outside;
    Edit current;
    for (const QString &line : response.split(QLatin1Char('\n'))) {
        const QString t = line.trimmed();
        if (state == Outside && t.startsWith(QLatin1String("<<<<<<<")) && t.contains(QLatin1String("SEARCH"))) {
            state = Search;
            current = {};
        } else if (state == Search && t.startsWith(QLatin1String("=======")) && t.count(QLatin1Char('=')) == t.size()) {
            state = Replace;
        } else if (state == Replace && t.startsWith(QLatin1String(">>>>>>>")) && t.contains(QLatin1String("REPLACE"))) {
            edits << current;
            state = Outside;
        } else if (state == Search) {
            current.search += line + QLatin1Char('\n');
        } else if (state == Replace) {
            current.replace += line + QLatin1Char('\n');
        }
    }
    return edits;
}

namespace {

QString squeeze(const QString &line) { return line.simplified(); }

// Finds `needle` lines in `hay` lines comparing whitespace-normalized text, ignoring blank lines at the
// block's edges. Returns the [first, last) line range, or nullopt; `count` gets the number of matches.
std::optional<QPair<int, int>> fuzzyFind(const QStringList &hay, QStringList needle, int *count)
{
    while (!needle.isEmpty() && needle.first().trimmed().isEmpty())
        needle.removeFirst();
    while (!needle.isEmpty() && needle.last().trimmed().isEmpty())
        needle.removeLast();
    *count = 0;
    if (needle.isEmpty())
        return std::nullopt;
    std::optional<QPair<int, int>> found;
    for (int i = 0; i + needle.size() <= hay.size(); ++i) {
        bool match = true;
        for (int j = 0; j < needle.size() && match; ++j)
            match = squeeze(hay.at(i + j)) == squeeze(needle.at(j));
        if (match) {
            ++*count;
            if (!found)
                found = QPair<int, int>{i, i + int(needle.size())};
        }
    }
    return found;
}

} // namespace

EditApplier::Result EditApplier::apply(const QString &code, const QList<Edit> &edits)
{
    Result result;
    if (edits.isEmpty()) {
        result.error = QStringLiteral("the response contains no complete SEARCH/REPLACE block");
        return result;
    }
    QString current = code;
    int index = 0;
    for (const Edit &edit : edits) {
        ++index;
        if (edit.search.trimmed().isEmpty()) {
            result.error = QStringLiteral("edit %1 has an empty SEARCH part").arg(index);
            return result;
        }
        const qsizetype first = current.indexOf(edit.search);
        if (first >= 0) {
            if (current.indexOf(edit.search, first + 1) >= 0) {
                result.error = QStringLiteral(
                                   "edit %1: the SEARCH text occurs more than once; it must identify one place")
                                   .arg(index);
                return result;
            }
            current.replace(first, edit.search.size(), edit.replace);
            continue;
        }
        QStringList lines = current.split(QLatin1Char('\n'));
        int count = 0;
        const auto range = fuzzyFind(lines, edit.search.split(QLatin1Char('\n')), &count);
        if (!range) {
            result.error =
                QStringLiteral(
                    "edit %1: the SEARCH text matches nothing in the current code, even ignoring whitespace:\n%2")
                    .arg(index)
                    .arg(edit.search.left(400));
            return result;
        }
        if (count > 1) {
            result.error = QStringLiteral("edit %1: the SEARCH text matches %2 places when whitespace is ignored")
                               .arg(index)
                               .arg(count);
            return result;
        }
        QStringList replacement = edit.replace.split(QLatin1Char('\n'));
        if (!replacement.isEmpty() && replacement.last().isEmpty())
            replacement.removeLast();
        lines = lines.mid(0, range->first) + replacement + lines.mid(range->second);
        current = lines.join(QLatin1Char('\n'));
        ++result.fuzzyBlocks;
    }
    result.ok = true;
    result.code = current;
    return result;
}

QString EditApplier::formatInstructions()
{
    return QStringLiteral(
        "Answer with one or more edit blocks, each exactly in this form:\n"
        "<<<<<<< SEARCH\n<lines copied exactly from the current code>\n=======\n<the new lines>\n>>>>>>> REPLACE\n"
        "Each SEARCH part must match exactly one place in the current code. Do not repeat the whole file.");
}

} // namespace autocomp
