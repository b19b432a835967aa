#include "editors/diff_view.h"
#include "editors/code_view.h"

#include "editors/code_highlighter.h"
#include "live/shown_run.h"
#include "store/run_store.h"
#include "common/status_palette.h"

#include <QAction>
#include <QComboBox>
#include <QFontDatabase>
#include <QFutureWatcher>
#include <QtConcurrent/QtConcurrentRun>
#include <QHBoxLayout>
#include <QLabel>
#include <QPlainTextEdit>
#include <QScrollBar>
#include <QSplitter>
#include <QTextBlock>
#include <QTextCursor>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>

namespace autocomp {

namespace {

QColor tint(DiffView::LineKind kind, bool strong, bool dark)
{
    switch (kind) {
    case DiffView::LineKind::Removed:
        return strong ? (dark ? QColor(0x8c, 0x2f, 0x39) : QColor(0xff, 0xb3, 0xba))
                      : (dark ? QColor(0x4b, 0x1f, 0x24) : QColor(0xff, 0xeb, 0xe9));
    case DiffView::LineKind::Added:
        return strong ? (dark ? QColor(0x23, 0x6b, 0x34) : QColor(0x9c, 0xe8, 0xae))
                      : (dark ? QColor(0x1b, 0x3d, 0x25) : QColor(0xe6, 0xff, 0xec));
    case DiffView::LineKind::Filler: return dark ? QColor(0x2a, 0x2c, 0x30) : QColor(0xf0, 0xf1, 0xf3);
    case DiffView::LineKind::Same: break;
    }
    return {};
}

} // namespace

DiffView::DiffView(QWidget *parent)
    : QWidget(parent)
    , m_compareSelector(new QComboBox)
    , m_modeSelector(new QComboBox)
    , m_layoutSelector(new QComboBox)
    , m_windowButton(new QToolButton)
    , m_moveButton(new QToolButton)
    , m_previousButton(new QToolButton)
    , m_nextButton(new QToolButton)
    , m_hunkSelector(new QComboBox)
    , m_summary(new QLabel)
    , m_left(new CodeView)
    , m_right(new CodeView)
    , m_unified(new CodeView)
{
    setObjectName(QStringLiteral("diffView"));
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);

    buildBars(layout);
    buildPanes(layout);

    connect(m_compareSelector, &QComboBox::currentIndexChanged, this, [this](int index) {
        if (m_filling || index < 0)
            return;
        const qint64 id = m_compareSelector->itemData(index).toLongLong();
        if (id == m_compareWith)
            return;
        m_compareWith = id;
        refresh();
        Q_EMIT compareWithChanged(id);
    });
    connect(m_modeSelector, &QComboBox::currentIndexChanged, this,
            [this](int index) { setMode(Mode(m_modeSelector->itemData(index).toInt())); });
    connect(m_layoutSelector, &QComboBox::currentIndexChanged, this,
            [this](int index) { setDiffLayout(Layout(m_layoutSelector->itemData(index).toInt())); });
    clear();
}

// Two rows above the text (what to compare with; mode, layout, change navigation, move and window buttons), the
// summary and the hunk selector, so the view fits the narrow inspector as well as the middle area.
void DiffView::buildBars(QVBoxLayout *layout)
{
    auto *bar = new QHBoxLayout;
    bar->setContentsMargins(4, 4, 4, 0);
    auto *compareLabel = new QLabel(tr("Compare with:"));
    compareLabel->setBuddy(m_compareSelector);
    m_compareSelector->setObjectName(QStringLiteral("diffCompareWith"));
    m_compareSelector->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_compareSelector->setMinimumContentsLength(12);
    m_compareSelector->setToolTip(
        tr("The candidate shown on the left: the parent, an ancestor or any other candidate of the run"));
    m_modeSelector->setObjectName(QStringLiteral("diffMode"));
    m_modeSelector->addItem(tr("Code"), int(Mode::Code));
    m_modeSelector->addItem(tr("Plan"), int(Mode::Plan));
    m_modeSelector->setToolTip(tr("Compare the code or the plan"));
    m_layoutSelector->setObjectName(QStringLiteral("diffLayout"));
    m_layoutSelector->addItem(tr("Side by side"), int(Layout::SideBySide));
    m_layoutSelector->addItem(tr("Unified"), int(Layout::Unified));
    m_layoutSelector->setToolTip(tr("Two panes, or one pane with removed (-) and added (+) lines"));
    for (QComboBox *combo : {m_modeSelector, m_layoutSelector}) {
        combo->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
        combo->setMinimumContentsLength(9);
    }
    m_windowButton->setObjectName(QStringLiteral("diffOpenWindow"));
    m_windowButton->setText(tr("Open in Window"));
    m_windowButton->setToolTip(tr("Shows this comparison in a window of its own, as large as you like"));
    connect(m_windowButton, &QToolButton::clicked, this, &DiffView::openInWindowRequested);
    m_moveButton->setObjectName(QStringLiteral("diffMove"));
    m_moveButton->hide();
    connect(m_moveButton, &QToolButton::clicked, this, &DiffView::moveRequested);

    auto *previous = new QAction(tr("Previous Change"), this);
    previous->setShortcuts({QKeySequence(Qt::SHIFT | Qt::Key_F8), QKeySequence(Qt::CTRL | Qt::ALT | Qt::Key_Up)});
    previous->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    previous->setToolTip(tr("Previous change (Shift+F8, Ctrl+Alt+Up)"));
    addAction(previous);
    auto *next = new QAction(tr("Next Change"), this);
    next->setShortcuts({QKeySequence(Qt::Key_F8), QKeySequence(Qt::CTRL | Qt::ALT | Qt::Key_Down)});
    next->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    next->setToolTip(tr("Next change (F8, Ctrl+Alt+Down)"));
    addAction(next);
    m_previousButton->setObjectName(QStringLiteral("diffPrevious"));
    m_previousButton->setDefaultAction(previous);
    m_previousButton->setText(QStringLiteral("▲"));
    m_nextButton->setObjectName(QStringLiteral("diffNext"));
    m_nextButton->setDefaultAction(next);
    m_nextButton->setText(QStringLiteral("▼"));
    connect(previous, &QAction::triggered, this, &DiffView::previousChange);
    connect(next, &QAction::triggered, this, &DiffView::nextChange);

    m_summary->setObjectName(QStringLiteral("diffSummary"));
    m_summary->setTextFormat(Qt::PlainText);
    m_summary->setWordWrap(true);
    // Two rows, so the view fits the narrow inspector as well as the middle area.
    bar->addWidget(compareLabel);
    bar->addWidget(m_compareSelector, 1);
    layout->addLayout(bar);
    auto *tools = new QHBoxLayout;
    tools->setContentsMargins(4, 0, 4, 0);
    tools->addWidget(m_modeSelector);
    tools->addWidget(m_layoutSelector);
    tools->addWidget(m_previousButton);
    tools->addWidget(m_nextButton);
    tools->addStretch(1);
    tools->addWidget(m_moveButton);
    tools->addWidget(m_windowButton);
    layout->addLayout(tools);
    m_summary->setContentsMargins(6, 0, 6, 0);
    layout->addWidget(m_summary);
    // The hunk headers, in both layouts: the one at the top of the view is shown, picking one scrolls to it.
    m_hunkSelector->setObjectName(QStringLiteral("diffHunks"));
    m_hunkSelector->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_hunkSelector->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_hunkSelector->setMinimumContentsLength(20);
    m_hunkSelector->setToolTip(
        tr("The hunk at the top of the view, as git diff heads it (old lines, new lines, the enclosing "
           "function); pick one to go to it"));
    auto *hunkRow = new QHBoxLayout;
    hunkRow->setContentsMargins(4, 0, 4, 0);
    hunkRow->addWidget(m_hunkSelector, 1);
    layout->addLayout(hunkRow);
    connect(m_hunkSelector, &QComboBox::activated, this, &DiffView::showHunk);
}

// The two side-by-side panes (one block per row, scrolled together) and the unified pane.
void DiffView::buildPanes(QVBoxLayout *layout)
{
    auto *splitter = new QSplitter(Qt::Horizontal);
    const QFont fixed = QFontDatabase::systemFont(QFontDatabase::FixedFont);
    for (QPlainTextEdit *side : {m_left, m_right}) {
        side->setReadOnly(true);
        side->setLineWrapMode(QPlainTextEdit::NoWrap);
        side->setFont(fixed);
        side->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard);
        splitter->addWidget(side);
    }
    m_left->setObjectName(QStringLiteral("diffLeft"));
    m_right->setObjectName(QStringLiteral("diffRight"));
    m_sides = splitter;
    layout->addWidget(splitter, 1);
    m_unified->setObjectName(QStringLiteral("diffUnified"));
    static_cast<CodeView *>(m_left)->setNumbering(CodeView::Numbering::DiffSide);
    static_cast<CodeView *>(m_right)->setNumbering(CodeView::Numbering::DiffSide);
    static_cast<CodeView *>(m_unified)->setNumbering(CodeView::Numbering::DiffUnified);
    m_unified->setReadOnly(true);
    m_unified->setLineWrapMode(QPlainTextEdit::NoWrap);
    m_unified->setFont(fixed);
    m_unified->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard);
    m_unified->hide();
    layout->addWidget(m_unified, 1);

    // Both sides have one block per row, so equal scroll positions show the same rows.
    const auto sync = [](QScrollBar *from, QScrollBar *to) {
        connect(from, &QScrollBar::valueChanged, to, [to](int value) { to->setValue(value); });
    };
    sync(m_left->verticalScrollBar(), m_right->verticalScrollBar());
    sync(m_right->verticalScrollBar(), m_left->verticalScrollBar());
    sync(m_left->horizontalScrollBar(), m_right->horizontalScrollBar());
    sync(m_right->horizontalScrollBar(), m_left->horizontalScrollBar());
    for (QPlainTextEdit *pane : {m_right, m_unified})
        connect(pane->verticalScrollBar(), &QScrollBar::valueChanged, this, &DiffView::followScroll);
}

void DiffView::setLookup(CandidateLookup lookup) { m_lookup = std::move(lookup); }

void DiffView::setRunCandidates(const QList<Candidate> &candidates)
{
    m_links.clear();
    m_order.clear();
    m_links.reserve(candidates.size());
    for (const Candidate &candidate : candidates)
        upsertCandidate(candidate);
    clear();
}

void DiffView::upsertCandidate(const Candidate &candidate)
{
    if (!m_links.contains(candidate.id))
        m_order.append(candidate.id);
    m_links.insert(candidate.id, Link{candidate.parentId, candidate.iteration, candidate.menuItem});
}

void DiffView::clear()
{
    m_current.reset();
    m_compareWith = 0;
    m_filling = true;
    m_compareSelector->clear();
    m_filling = false;
    m_left->clear();
    m_right->clear();
    m_unified->clear();
    m_rows.clear();
    m_hunks.clear();
    m_hunkSelector->clear();
    m_hunkSelector->hide();
    m_unifiedChangeLines.clear();
    m_changeRows.clear();
    m_currentChange = -1;
    m_summary->setText(tr("Select a candidate to compare it with its parent."));
    m_previousButton->setEnabled(false);
    m_nextButton->setEnabled(false);
}

void DiffView::setCandidate(const Candidate &candidate)
{
    if (!m_links.contains(candidate.id))
        upsertCandidate(candidate);
    m_current = candidate;
    m_compareWith = candidate.parentId;
    fillSelector();
    refresh();
}

QString DiffView::describe(qint64 candidateId) const
{
    const Link link = m_links.value(candidateId);
    QString text = tr("#%1 · iteration %2").arg(candidateId).arg(link.iteration);
    if (!link.menuItem.isEmpty())
        text += QStringLiteral(" · ") + link.menuItem;
    return text;
}

void DiffView::fillSelector()
{
    m_filling = true;
    m_compareSelector->clear();
    if (m_current) {
        QList<qint64> ancestors;
        for (qint64 id = m_current->parentId; id != 0 && !ancestors.contains(id); id = m_links.value(id).parentId)
            ancestors.append(id);
        for (int i = 0; i < ancestors.size(); ++i) {
            const QString role = i == 0 ? tr("Parent") : i == ancestors.size() - 1 ? tr("Root") : tr("Ancestor");
            m_compareSelector->addItem(role + QLatin1String(" ") + describe(ancestors.at(i)), ancestors.at(i));
        }
        if (!ancestors.isEmpty())
            m_compareSelector->insertSeparator(m_compareSelector->count());
        QStringList labels;
        QList<qint64> ids;
        for (qint64 id : std::as_const(m_order)) {
            if (id == m_current->id || ancestors.contains(id))
                continue;
            labels.append(describe(id));
            ids.append(id);
        }
        const int first = m_compareSelector->count();
        m_compareSelector->addItems(labels);
        for (int i = 0; i < ids.size(); ++i)
            m_compareSelector->setItemData(first + i, ids.at(i));
        if (ancestors.isEmpty()) {
            m_compareSelector->insertItem(0, tr("(no parent: pick a candidate)"), qint64(0));
            m_compareSelector->insertSeparator(1);
        }
    }
    m_compareSelector->setCurrentIndex(std::max(0, m_compareSelector->findData(m_compareWith)));
    m_filling = false;
}

bool DiffView::setCompareWith(qint64 candidateId)
{
    const int index = m_compareSelector->findData(candidateId);
    if (index < 0)
        return false;
    m_compareSelector->setCurrentIndex(index);
    return true;
}

void DiffView::setMode(Mode mode)
{
    if (mode == m_mode)
        return;
    m_mode = mode;
    m_modeSelector->setCurrentIndex(m_modeSelector->findData(int(mode)));
    refresh();
}

void DiffView::setDiffLayout(Layout layout)
{
    if (layout == m_layout)
        return;
    m_layout = layout;
    m_layoutSelector->setCurrentIndex(m_layoutSelector->findData(int(layout)));
    m_sides->setVisible(layout == Layout::SideBySide);
    m_unified->setVisible(layout == Layout::Unified);
    render(m_rows);
    followScroll();
}

QString DiffView::unifiedText() const { return m_layout == Layout::Unified ? m_unified->toPlainText() : QString(); }

void DiffView::setOpenInWindowVisible(bool visible) { m_windowButton->setVisible(visible); }

void DiffView::setMoveButton(const QString &text, const QString &toolTip)
{
    m_moveButton->setText(text);
    m_moveButton->setToolTip(toolTip);
    m_moveButton->setVisible(!text.isEmpty());
}

void DiffView::refresh()
{
    m_changeRows.clear();
    m_currentChange = -1;
    if (!m_current) {
        clear();
        return;
    }
    std::optional<Candidate> other;
    if (m_compareWith != 0 && m_lookup)
        other = m_lookup(m_compareWith);
    const auto textOf = [this](const Candidate &c) { return m_mode == Mode::Code ? c.code : c.plan; };
    const QString rightText = textOf(*m_current);
    const QString leftText = other ? textOf(*other) : QString();
    const qint64 generation = ++m_generation;
    // Large files are diffed on the thread pool; the view shows the result when it is still wanted.
    if (leftText.size() + rightText.size() > AsyncDiffChars) {
        m_summary->setText(tr("Comparing %n line(s)…", nullptr, int(rightText.count(QLatin1Char('\n')) + 1)));
        auto *watcher = new QFutureWatcher<Diff>(this);
        connect(watcher, &QFutureWatcher<Diff>::finished, this, [this, watcher, generation, other] {
            watcher->deleteLater();
            if (generation == m_generation && m_current)
                showRows(watcher->result(), other);
        });
        watcher->setFuture(QtConcurrent::run(&DiffView::diff, leftText, rightText));
        return;
    }
    showRows(diff(leftText, rightText), other);
}

void DiffView::showRows(const Diff &diff, const std::optional<Candidate> &other)
{
    const QList<Row> &rows = diff.rows;
    m_hunks = other ? diff.hunks : QList<Hunk>();
    render(rows);
    m_hunkSelector->clear();
    for (int i = 0; i < m_hunks.size(); ++i)
        m_hunkSelector->addItem(tr("%1/%2  %3").arg(i + 1).arg(m_hunks.size()).arg(m_hunks.at(i).header));
    m_hunkSelector->setVisible(!m_hunks.isEmpty());
    followScroll();

    int removed = 0;
    int added = 0;
    for (int i = 0; i < rows.size(); ++i) {
        const Row &row = rows.at(i);
        removed += row.leftKind == LineKind::Removed;
        added += row.rightKind == LineKind::Added;
        const bool changed = row.leftKind != LineKind::Same || row.rightKind != LineKind::Same;
        const bool previousChanged = i > 0
            && (rows.at(i - 1).leftKind != LineKind::Same || rows.at(i - 1).rightKind != LineKind::Same);
        if (changed && !previousChanged)
            m_changeRows.append(i);
    }
    const QString what = m_mode == Mode::Code ? tr("code") : tr("plan");
    if (!other) {
        m_summary->setText(
            tr("#%1 has no parent; pick a candidate to compare its %2 with.").arg(m_current->id).arg(what));
        m_left->setPlaceholderText(tr("Nothing to compare with"));
    } else if (m_changeRows.isEmpty()) {
        m_summary->setText(tr("The %1 of #%2 and #%3 is the same.").arg(what).arg(other->id).arg(m_current->id));
    } else {
        m_summary->setText(tr("%1 of #%2 (left) vs #%3 (right): %n change(s), ", nullptr, int(m_changeRows.size()))
                               .arg(m_mode == Mode::Code ? tr("Code") : tr("Plan"))
                               .arg(other->id)
                               .arg(m_current->id)
                           + tr("−%1 +%2 lines").arg(removed).arg(added));
    }
    m_previousButton->setEnabled(!m_changeRows.isEmpty());
    m_nextButton->setEnabled(!m_changeRows.isEmpty());
}

void DiffView::changeEvent(QEvent *event)
{
    QWidget::changeEvent(event);
    // A theme switch redraws the rows in the new palette's tints (light tints under light text are unreadable).
    if (event->type() == QEvent::PaletteChange && !m_rows.isEmpty())
        render(QList<Row>(m_rows));
}

void DiffView::setLanguage(const QString &language)
{
    if (language == m_language)
        return;
    m_language = language;
    updateHighlighting();
}

void DiffView::updateHighlighting()
{
    const QString language = m_mode == Mode::Plan ? QStringLiteral("markdown") : m_language;
    if (language == m_highlighted)
        return;
    m_highlighted = language;
    for (QPlainTextEdit *pane : {m_left, m_right, m_unified})
        CodeHighlighter::attach(pane->document(), language);
}

int DiffView::topVisibleRow() const
{
    if (m_layout == Layout::Unified) {
        const int line = m_unified->cursorForPosition(QPoint(0, 0)).blockNumber();
        return m_rowOfUnifiedLine.value(line, 0);
    }
    return m_right->cursorForPosition(QPoint(0, 0)).blockNumber();
}

int DiffView::currentHunk() const
{
    if (m_hunks.isEmpty())
        return -1;
    const int top = topVisibleRow();
    int current = 0;
    for (int i = 0; i < m_hunks.size(); ++i)
        if (m_hunks.at(i).row <= top)
            current = i;
    return current;
}

void DiffView::followScroll()
{
    if (m_hunks.isEmpty())
        return;
    const QSignalBlocker blocker(m_hunkSelector);
    m_hunkSelector->setCurrentIndex(currentHunk());
}

void DiffView::showHunk(int index)
{
    if (index < 0 || index >= m_hunks.size())
        return;
    const int row = m_hunks.at(index).row;
    if (m_layout == Layout::Unified) {
        const int line = m_unifiedLineOfRow.value(row, 0);
        m_unified->setTextCursor(QTextCursor(m_unified->document()->findBlockByNumber(line)));
        m_unified->verticalScrollBar()->setValue(line);
    } else {
        for (QPlainTextEdit *editor : {m_left, m_right})
            editor->setTextCursor(QTextCursor(editor->document()->findBlockByNumber(row)));
        m_right->verticalScrollBar()->setValue(row);
    }
    const QSignalBlocker blocker(m_hunkSelector);
    m_hunkSelector->setCurrentIndex(index);
}

void DiffView::render(const QList<Row> &rows)
{
    m_rows = rows;
    updateHighlighting();
    if (m_layout == Layout::Unified) {
        m_left->clear();
        m_right->clear();
        renderUnified(rows);
        return;
    }
    m_unified->clear();
    m_unifiedChangeLines.clear();
    const bool dark = StatusPalette::isDark(palette());
    const auto fill = [&](QPlainTextEdit *editor, bool left) {
        const int scroll = editor->verticalScrollBar()->value();
        QTextDocument *document = editor->document();
        document->clear();
        QTextCursor cursor(document);
        cursor.beginEditBlock();
        for (int i = 0; i < rows.size(); ++i) {
            const Row &row = rows.at(i);
            const LineKind kind = left ? row.leftKind : row.rightKind;
            QTextBlockFormat blockFormat;
            blockFormat.setProperty(LineKindProperty, int(kind));
            if (kind == LineKind::Filler)
                blockFormat.setBackground(QBrush(tint(kind, false, dark).darker(115), Qt::BDiagPattern));
            else if (kind != LineKind::Same)
                blockFormat.setBackground(tint(kind, false, dark));
            if (i == 0)
                cursor.setBlockFormat(blockFormat);
            else
                cursor.insertBlock(blockFormat, QTextCharFormat());
            const QString &text = left ? row.left : row.right;
            const QList<std::pair<int, int>> &spans = left ? row.leftSpans : row.rightSpans;
            int position = 0;
            for (const auto &[start, length] : spans) {
                cursor.insertText(text.mid(position, start - position), QTextCharFormat());
                QTextCharFormat strong;
                strong.setBackground(tint(kind, true, dark));
                strong.setProperty(ChangedSpanProperty, true);
                cursor.insertText(text.mid(start, length), strong);
                position = start + length;
            }
            cursor.insertText(text.mid(position), QTextCharFormat());
        }
        cursor.endEditBlock();
        editor->moveCursor(QTextCursor::Start);
        editor->verticalScrollBar()->setValue(scroll);
    };
    fill(m_left, true);
    fill(m_right, false);
}

void DiffView::renderUnified(const QList<Row> &rows)
{
    // A change (consecutive changed rows) is shown as its removed lines, then its added lines.
    const bool dark = StatusPalette::isDark(palette());
    m_unifiedChangeLines.clear();
    m_unifiedLineOfRow.clear();
    m_rowOfUnifiedLine.clear();
    QTextDocument *document = m_unified->document();
    const int scroll = m_unified->verticalScrollBar()->value();
    document->clear();
    QTextCursor cursor(document);
    cursor.beginEditBlock();
    int line = 0;
    const auto emitLine = [&](LineKind kind, const QString &text, const QList<std::pair<int, int>> &spans) {
        QTextBlockFormat blockFormat;
        blockFormat.setProperty(LineKindProperty, int(kind));
        if (kind != LineKind::Same)
            blockFormat.setBackground(tint(kind, false, dark));
        if (line == 0)
            cursor.setBlockFormat(blockFormat);
        else
            cursor.insertBlock(blockFormat, QTextCharFormat());
        cursor.insertText(kind == LineKind::Removed     ? QStringLiteral("- ")
                              : kind == LineKind::Added ? QStringLiteral("+ ")
                                                        : QStringLiteral("  "),
                          QTextCharFormat());
        int position = 0;
        for (const auto &[start, length] : spans) {
            cursor.insertText(text.mid(position, start - position), QTextCharFormat());
            QTextCharFormat strong;
            strong.setBackground(tint(kind, true, dark));
            strong.setProperty(ChangedSpanProperty, true);
            cursor.insertText(text.mid(start, length), strong);
            position = start + length;
        }
        cursor.insertText(text.mid(position), QTextCharFormat());
        ++line;
    };
    for (int i = 0; i < rows.size();) {
        const Row &row = rows.at(i);
        if (row.leftKind == LineKind::Same && row.rightKind == LineKind::Same) {
            m_unifiedLineOfRow.append(line);
            m_rowOfUnifiedLine.append(i);
            emitLine(LineKind::Same, row.right, {});
            ++i;
            continue;
        }
        int end = i;
        while (end < rows.size()
               && (rows.at(end).leftKind != LineKind::Same || rows.at(end).rightKind != LineKind::Same))
            ++end;
        m_unifiedChangeLines.append(line);
        for (int j = i; j < end; ++j) {
            m_unifiedLineOfRow.append(line);
            m_rowOfUnifiedLine.append(j); // one line per removed and per added line, in the change's rows
            if (rows.at(j).leftKind == LineKind::Removed && rows.at(j).rightKind == LineKind::Added)
                m_rowOfUnifiedLine.append(j);
        }
        for (int j = i; j < end; ++j)
            if (rows.at(j).leftKind == LineKind::Removed)
                emitLine(LineKind::Removed, rows.at(j).left, rows.at(j).leftSpans);
        for (int j = i; j < end; ++j)
            if (rows.at(j).rightKind == LineKind::Added)
                emitLine(LineKind::Added, rows.at(j).right, rows.at(j).rightSpans);
        i = end;
    }
    cursor.endEditBlock();
    m_unified->moveCursor(QTextCursor::Start);
    m_unified->verticalScrollBar()->setValue(scroll);
}

int DiffView::cursorRow() const
{
    if (m_layout == Layout::Unified) {
        // The side-by-side row of the change at or before the cursor's line.
        const int line = m_unified->textCursor().blockNumber();
        int row = -1;
        for (int i = 0; i < m_unifiedChangeLines.size() && i < m_changeRows.size(); ++i)
            if (m_unifiedChangeLines.at(i) <= line)
                row = m_changeRows.at(i);
        return row;
    }
    const QPlainTextEdit *editor = m_left->hasFocus() ? m_left : m_right;
    return editor->textCursor().blockNumber();
}

void DiffView::nextChange()
{
    const int row = cursorRow();
    for (int i = 0; i < m_changeRows.size(); ++i)
        if (m_changeRows.at(i) > row || (m_currentChange < 0 && m_changeRows.at(i) >= row)) {
            jumpTo(i);
            return;
        }
}

void DiffView::previousChange()
{
    const int row = cursorRow();
    for (int i = int(m_changeRows.size()) - 1; i >= 0; --i)
        if (m_changeRows.at(i) < row) {
            jumpTo(i);
            return;
        }
}

void DiffView::jumpTo(int change)
{
    m_currentChange = change;
    if (m_layout == Layout::Unified && change < m_unifiedChangeLines.size()) {
        m_unified->setTextCursor(
            QTextCursor(m_unified->document()->findBlockByNumber(m_unifiedChangeLines.at(change))));
        m_unified->centerCursor();
        return;
    }
    const int row = m_changeRows.at(change);
    for (QPlainTextEdit *editor : {m_left, m_right}) {
        QTextCursor cursor(editor->document()->findBlockByNumber(row));
        editor->setTextCursor(cursor);
        editor->centerCursor();
    }
}

void DiffView::setShownRun(const ShownRun *run)
{
    setLookup([run](qint64 id) { return run->store()->candidate(id); });
    connect(run, &ShownRun::shown, this, [this, run](const QList<Candidate> &candidates) {
        if (run->id() == 0) {
            clear();
            return;
        }
        setRunCandidates(candidates);
        setLanguage(run->language());
    });
    connect(run, &ShownRun::candidatesChanged, this, [this](const QList<Candidate> &candidates) {
        for (const Candidate &c : candidates)
            upsertCandidate(c);
    });
    connect(run, &ShownRun::candidateSelected, this, &DiffView::setCandidate);
}

} // namespace autocomp
