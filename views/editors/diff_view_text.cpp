// DiffView's text diff: libgit2's buffer diff turned into aligned rows, hunks and intra-line spans, and the unified
// patch. Pure functions (no widget), so they are tested and reused without a view; declared in diff_view.h.
#include "editors/diff_view.h"

#include <git2.h>

#include <algorithm>

namespace autocomp {

namespace {

// Lines of a text as libgit2 numbers them: a trailing newline ends the last line rather than starting one.
QStringList splitLines(const QString &text)
{
    QStringList lines = text.split(QLatin1Char('\n'));
    if (!lines.isEmpty() && lines.last().isEmpty())
        lines.removeLast();
    return lines;
}

QString stripNewline(QString line)
{
    while (line.endsWith(QLatin1Char('\n')) || line.endsWith(QLatin1Char('\r')))
        line.chop(1);
    return line;
}

// Words, numbers, runs of blanks and single punctuation characters: the units the eye compares.
QList<std::pair<int, int>> tokenize(const QString &line)
{
    QList<std::pair<int, int>> tokens;
    int i = 0;
    while (i < line.size()) {
        const QChar c = line.at(i);
        int j = i + 1;
        if (c.isLetterOrNumber() || c == QLatin1Char('_')) {
            while (j < line.size() && (line.at(j).isLetterOrNumber() || line.at(j) == QLatin1Char('_')))
                ++j;
        } else if (c.isSpace()) {
            while (j < line.size() && line.at(j).isSpace())
                ++j;
        }
        tokens.append({i, j - i});
        i = j;
    }
    return tokens;
}

// Marks the tokens of two changed lines that are not in their longest common token subsequence. Only the
// two lines are compared, so the quadratic table stays small; overly long lines are marked whole.
void intraLineSpans(const QString &a, const QString &b, QList<std::pair<int, int>> *spansA,
                    QList<std::pair<int, int>> *spansB)
{
    const QList<std::pair<int, int>> ta = tokenize(a);
    const QList<std::pair<int, int>> tb = tokenize(b);
    const qsizetype n = ta.size();
    const qsizetype m = tb.size();
    if (n * m > 200000) {
        if (!a.isEmpty())
            spansA->append({0, int(a.size())});
        if (!b.isEmpty())
            spansB->append({0, int(b.size())});
        return;
    }
    const auto token = [](const QString &s, const std::pair<int, int> &t) {
        return QStringView(s).mid(t.first, t.second);
    };
    QList<int> table((n + 1) * (m + 1), 0);
    const auto at = [&](qsizetype i, qsizetype j) -> int & { return table[i * (m + 1) + j]; };
    for (qsizetype i = n - 1; i >= 0; --i)
        for (qsizetype j = m - 1; j >= 0; --j)
            at(i, j) = token(a, ta.at(i)) == token(b, tb.at(j)) ? at(i + 1, j + 1) + 1
                                                                : std::max(at(i + 1, j), at(i, j + 1));
    QList<bool> keepA(n, false);
    QList<bool> keepB(m, false);
    for (qsizetype i = 0, j = 0; i < n && j < m;) {
        if (token(a, ta.at(i)) == token(b, tb.at(j))) {
            keepA[i++] = true;
            keepB[j++] = true;
        } else if (at(i + 1, j) >= at(i, j + 1)) {
            ++i;
        } else {
            ++j;
        }
    }
    const auto collect = [](const QList<std::pair<int, int>> &tokens, const QList<bool> &keep,
                            QList<std::pair<int, int>> *spans) {
        for (qsizetype i = 0; i < tokens.size(); ++i) {
            if (keep.at(i))
                continue;
            const auto [start, length] = tokens.at(i);
            if (!spans->isEmpty() && spans->last().first + spans->last().second == start)
                spans->last().second += length;
            else
                spans->append({start, length});
        }
    };
    collect(ta, keepA, spansA);
    collect(tb, keepB, spansB);
}

struct DiffCollector
{
    QStringList oldLines;
    QStringList newLines;
    QList<DiffView::Row> rows;
    QStringList removed;
    QStringList added;
    int oldPos = 1; // next line of each side not yet in `rows`
    int newPos = 1;
    struct RawHunk
    {
        int oldStart = 0;
        int oldLines = 0;
        int newStart = 0;
        int newLines = 0;
        QString header;
    };
    QList<RawHunk> hunks;

    void flushChange()
    {
        const qsizetype paired = std::min(removed.size(), added.size());
        for (qsizetype i = 0; i < std::max(removed.size(), added.size()); ++i) {
            DiffView::Row row;
            if (i < removed.size()) {
                row.leftKind = DiffView::LineKind::Removed;
                row.left = removed.at(i);
            } else {
                row.leftKind = DiffView::LineKind::Filler;
            }
            if (i < added.size()) {
                row.rightKind = DiffView::LineKind::Added;
                row.right = added.at(i);
            } else {
                row.rightKind = DiffView::LineKind::Filler;
            }
            if (i < paired)
                intraLineSpans(row.left, row.right, &row.leftSpans, &row.rightSpans);
            rows.append(row);
        }
        removed.clear();
        added.clear();
    }

    // Lines between hunks are the same on both sides; libgit2 reports only a few of them as context.
    void sameLinesUntil(int oldLine, int newLine)
    {
        while ((oldLine < 0 || oldPos < oldLine) && (newLine < 0 || newPos < newLine) && oldPos <= oldLines.size()
               && newPos <= newLines.size()) {
            DiffView::Row row;
            row.left = oldLines.at(oldPos - 1);
            row.right = newLines.at(newPos - 1);
            rows.append(row);
            ++oldPos;
            ++newPos;
        }
    }

    void line(const git_diff_line *line)
    {
        const QString text = stripNewline(QString::fromUtf8(line->content, qsizetype(line->content_len)));
        switch (line->origin) {
        case GIT_DIFF_LINE_CONTEXT:
            flushChange();
            sameLinesUntil(line->old_lineno, line->new_lineno);
            rows.append(DiffView::Row{DiffView::LineKind::Same,
                                      DiffView::LineKind::Same,
                                      text,
                                      newLines.value(line->new_lineno - 1, text),
                                      {},
                                      {}});
            oldPos = line->old_lineno + 1;
            newPos = line->new_lineno + 1;
            break;
        case GIT_DIFF_LINE_DELETION:
            if (!added.isEmpty())
                flushChange();
            if (removed.isEmpty())
                sameLinesUntil(line->old_lineno, -1);
            removed.append(text);
            oldPos = line->old_lineno + 1;
            break;
        case GIT_DIFF_LINE_ADDITION:
            if (removed.isEmpty() && added.isEmpty())
                sameLinesUntil(-1, line->new_lineno);
            added.append(text);
            newPos = line->new_lineno + 1;
            break;
        default: break; // "\ No newline at end of file" and file headers
        }
    }
};

int onHunk(const git_diff_delta *, const git_diff_hunk *hunk, void *payload)
{
    auto *collector = static_cast<DiffCollector *>(payload);
    collector->flushChange();
    collector->hunks.append({hunk->old_start, hunk->old_lines, hunk->new_start, hunk->new_lines,
                             stripNewline(QString::fromUtf8(hunk->header, qsizetype(hunk->header_len))).trimmed()});
    return 0;
}

int onLine(const git_diff_delta *, const git_diff_hunk *, const git_diff_line *line, void *payload)
{
    static_cast<DiffCollector *>(payload)->line(line);
    return 0;
}

void ensureLibgit2()
{
    static const int s_initialized = git_libgit2_init();
    Q_UNUSED(s_initialized);
}

} // namespace

QList<DiffView::Row> DiffView::diffRows(const QString &left, const QString &right) { return diff(left, right).rows; }

DiffView::Diff DiffView::diff(const QString &left, const QString &right)
{
    ensureLibgit2();
    DiffCollector collector;
    collector.oldLines = splitLines(left);
    collector.newLines = splitLines(right);
    const QByteArray oldBytes = left.toUtf8();
    const QByteArray newBytes = right.toUtf8();
    git_diff_options options = GIT_DIFF_OPTIONS_INIT;
    options.flags = GIT_DIFF_FORCE_TEXT;
    options.context_lines = 3;
    const int error = git_diff_buffers(oldBytes.constData(), size_t(oldBytes.size()), "a", newBytes.constData(),
                                       size_t(newBytes.size()), "b", &options, nullptr, nullptr, &onHunk, &onLine,
                                       &collector);
    if (error < 0) {
        // Not expected for two in-memory texts; show them unaligned rather than nothing.
        collector.rows.clear();
        collector.hunks.clear();
        collector.oldPos = collector.newPos = 1;
    }
    collector.flushChange();
    collector.sameLinesUntil(-1, -1);
    // Unequal tails only happen when libgit2 failed; show what is left on its own side.
    for (; collector.oldPos <= collector.oldLines.size(); ++collector.oldPos)
        collector.rows.append(
            Row{LineKind::Removed, LineKind::Filler, collector.oldLines.at(collector.oldPos - 1), {}, {}, {}});
    for (; collector.newPos <= collector.newLines.size(); ++collector.newPos)
        collector.rows.append(
            Row{LineKind::Filler, LineKind::Added, {}, collector.newLines.at(collector.newPos - 1), {}, {}});
    // Each hunk starts on the row of its first old line (its first new line when it has no old ones).
    Diff result;
    int row = 0;
    int oldLine = 0; // line numbers of `row` on each side, 0 on a filler
    int newLine = 0;
    const auto advance = [&] {
        const Row &r = collector.rows.at(row);
        oldLine += r.leftKind != LineKind::Filler;
        newLine += r.rightKind != LineKind::Filler;
    };
    if (!collector.rows.isEmpty())
        advance();
    for (const DiffCollector::RawHunk &hunk : std::as_const(collector.hunks)) {
        const bool byOld = hunk.oldLines > 0;
        while (row + 1 < collector.rows.size() && (byOld ? oldLine < hunk.oldStart : newLine < hunk.newStart)) {
            ++row;
            advance();
        }
        result.hunks.append({row, hunk.header});
    }
    result.rows = collector.rows;
    return result;
}

QString DiffView::unifiedPatch(const QString &left, const QString &right, const QString &leftName,
                               const QString &rightName)
{
    ensureLibgit2();
    const QByteArray oldBytes = left.toUtf8(), newBytes = right.toUtf8();
    const QByteArray oldName = leftName.toUtf8(), newName = rightName.toUtf8();
    git_diff_options options = GIT_DIFF_OPTIONS_INIT;
    options.flags = GIT_DIFF_FORCE_TEXT;
    options.context_lines = 3;
    git_patch *patch = nullptr;
    if (git_patch_from_buffers(&patch, oldBytes.constData(), size_t(oldBytes.size()), oldName.constData(),
                               newBytes.constData(), size_t(newBytes.size()), newName.constData(), &options)
        < 0)
        return {};
    git_buf buffer = GIT_BUF_INIT;
    QString text;
    if (git_patch_to_buf(&buffer, patch) == 0)
        text = QString::fromUtf8(buffer.ptr, qsizetype(buffer.size));
    git_buf_dispose(&buffer);
    git_patch_free(patch);
    // libgit2 starts with a `diff --git` line and no index; keep from the file headers on.
    if (const qsizetype headers = text.indexOf(QStringLiteral("\n--- "));
        text.startsWith(QLatin1String("diff --git")) && headers >= 0)
        text = text.mid(headers + 1);
    return text;
}

} // namespace autocomp
