#pragma once

#include "model/candidate.h"

#include <QHash>
#include <QList>
#include <QTextFormat>
#include <QWidget>

#include <functional>
#include <optional>

class QComboBox;
class QLabel;
class QPlainTextEdit;
class QToolButton;
class QVBoxLayout;

namespace autocomp {

class ShownRun;

// Two candidates side by side: the one to compare with on the left (by default the parent), the selected
// one on the right. Lines come from libgit2's buffer diff; changed lines are tinted and the changed words
// inside a pair of changed lines are marked more strongly. Both sides scroll together. The text is highlighted
// in the code's language (setLanguage; plans as markdown), and a selector above the panes ("diffHunks") heads
// the hunk at the top of the view as `git diff` does and jumps to any hunk, in both layouts.
class DiffView : public QWidget
{
    Q_OBJECT
public:
    enum class Mode { Code, Plan };
    // Two panes (left: the one compared with), or one pane of -/+ lines as `diff -u` shows them.
    enum class Layout { SideBySide, Unified };
    enum class LineKind { Same, Removed, Added, Filler };
    // Block format property: the LineKind of a line, on both sides.
    static constexpr int LineKindProperty = QTextFormat::UserProperty + 40;
    // Char format property: true on the changed words inside a changed line.
    static constexpr int ChangedSpanProperty = QTextFormat::UserProperty + 41;

    struct Row
    {
        LineKind leftKind = LineKind::Same;
        LineKind rightKind = LineKind::Same;
        QString left;
        QString right;
        QList<std::pair<int, int>> leftSpans; // (start, length) of changed words
        QList<std::pair<int, int>> rightSpans;
    };
    // A hunk as `git diff` heads it: "@@ -12,7 +12,8 @@ void gemm(int n)" (libgit2's header: ranges with 3 lines
    // of context, then the line before the hunk that opens the enclosing function, when there is one), and
    // the row its first line is on.
    struct Hunk
    {
        int row = 0;
        QString header;
    };
    struct Diff
    {
        QList<Row> rows;
        QList<Hunk> hunks;
    };
    // The side-by-side rows of a line diff of `left` against `right` (libgit2), with changed words marked.
    static QList<Row> diffRows(const QString &left, const QString &right);
    // The rows and the hunks of the same diff.
    static Diff diff(const QString &left, const QString &right);
    // `left` against `right` as a unified diff with hunk headers (`--- a/NAME`, `+++ b/NAME`, `@@ -l,n +l,n @@`),
    // as `git diff` prints it (libgit2); empty when the texts are equal.
    static QString unifiedPatch(const QString &left, const QString &right, const QString &leftName,
                                const QString &rightName);

    using CandidateLookup = std::function<std::optional<Candidate>(qint64)>;

    explicit DiffView(QWidget *parent = nullptr);

    // Where the full candidates come from (code and plan); the view keeps only their ids and tree links.
    void setLookup(CandidateLookup lookup);
    void setRunCandidates(const QList<Candidate> &candidates);
    // Follows `run`: its candidates and language when it is shown (the store as the lookup), each batch of
    // changes, the selected candidate.
    void setShownRun(const ShownRun *run);
    void upsertCandidate(const Candidate &candidate);
    // Shows `candidate` against its parent (or what the selector offers when it has none).
    void setCandidate(const Candidate &candidate);
    void clear();

    qint64 candidateId() const { return m_current ? m_current->id : 0; }
    qint64 compareWithId() const { return m_compareWith; }
    // Picks the left side; false when the run has no such candidate.
    bool setCompareWith(qint64 candidateId);
    Mode mode() const { return m_mode; }
    void setMode(Mode mode);
    Layout diffLayout() const { return m_layout; }
    void setDiffLayout(Layout layout);
    // The unified text as shown ("- old", "+ new", "  same" lines); empty in the side-by-side layout.
    QString unifiedText() const;
    // The language the code is highlighted in (CodeHighlighter: cpp, cuda, python, ...); plans are markdown.
    void setLanguage(const QString &language);
    QString language() const { return m_language; }
    // The hunks shown (their headers in the "diffHunks" selector, in both layouts), in order.
    QList<Hunk> hunks() const { return m_hunks; }
    // The hunk the selector shows: the last one starting at or above the top visible row; -1 when there are none.
    int currentHunk() const;
    // Scrolls the shown layout so hunk `index` starts at the top.
    void showHunk(int index);

    // Hides the "Open in Window" button (in a window of its own it has nowhere to go).
    void setOpenInWindowVisible(bool visible);
    // Shows a button that asks to move the view elsewhere (moveRequested); an empty text hides it.
    void setMoveButton(const QString &text, const QString &toolTip);

    // Row of the first line of each change, in order.
    QList<int> changeRows() const { return m_changeRows; }
    // Index into changeRows() of the change the cursor was last moved to; -1 before the first move.
    int currentChange() const { return m_currentChange; }

public Q_SLOTS:
    void nextChange();
    void previousChange();

Q_SIGNALS:
    void compareWithChanged(qint64 candidateId);
    // The user asked for this comparison in a window of its own.
    void openInWindowRequested();
    void moveRequested();

private:
    struct Link
    {
        qint64 parentId = 0;
        int iteration = 0;
        QString menuItem;
    };

    void buildBars(QVBoxLayout *layout);
    void buildPanes(QVBoxLayout *layout);
    void fillSelector();
    void refresh();
    void render(const QList<Row> &rows);
    void changeEvent(QEvent *event) override;
    void renderUnified(const QList<Row> &rows);
    void showRows(const Diff &diff, const std::optional<Candidate> &other);
    // Highlights the panes in the code's language (or markdown for plans) when that changed.
    void updateHighlighting();
    // Shows in the hunk selector the hunk at the top of the visible rows.
    void followScroll();
    int topVisibleRow() const;
    void jumpTo(int change);
    int cursorRow() const;
    QString describe(qint64 candidateId) const;

    CandidateLookup m_lookup;
    QHash<qint64, Link> m_links;
    QList<qint64> m_order;
    std::optional<Candidate> m_current;
    qint64 m_generation = 0; // refresh() count: a diff that finishes after a newer one started is dropped
    static constexpr qsizetype AsyncDiffChars = 256 * 1024; // larger texts are diffed off the GUI thread
    qint64 m_compareWith = 0;
    Mode m_mode = Mode::Code;
    QList<int> m_changeRows;
    QList<int> m_unifiedChangeLines; // per change: its first line in the unified pane
    Layout m_layout = Layout::SideBySide;
    QList<Row> m_rows; // what is shown, for switching layouts without diffing again
    QList<Hunk> m_hunks;
    QList<int> m_unifiedLineOfRow; // per row: its line in the unified pane (a change's rows: the change's first line)
    QList<int> m_rowOfUnifiedLine; // per unified line: its row
    QString m_language;
    QString m_highlighted; // the language the panes are highlighted in now
    int m_currentChange = -1;
    bool m_filling = false;

    QComboBox *m_compareSelector;
    QComboBox *m_modeSelector;
    QComboBox *m_layoutSelector;
    QToolButton *m_windowButton;
    QToolButton *m_moveButton;
    QToolButton *m_previousButton;
    QToolButton *m_nextButton;
    QComboBox *m_hunkSelector;
    QLabel *m_summary;
    QPlainTextEdit *m_left;
    QPlainTextEdit *m_right;
    QPlainTextEdit *m_unified;
    QWidget *m_sides = nullptr;
};

} // namespace autocomp
