#include "editors/code_view.h"

#include "editors/diff_view.h"

#include <QKeyEvent>
#include <QLineEdit>
#include <QPainter>
#include <QTextBlock>

namespace autocomp {

namespace {

class Gutter : public QWidget
{
public:
    explicit Gutter(CodeView *view) : QWidget(view), m_view(view) { setObjectName(QStringLiteral("lineNumbers")); }
    QSize sizeHint() const override { return {m_view->gutterWidth(), 0}; }

protected:
    void paintEvent(QPaintEvent *event) override { m_view->paintGutter(event); }

private:
    CodeView *m_view;
};

} // namespace

CodeView::CodeView(QWidget *parent)
    : QPlainTextEdit(parent)
    , m_gutter(new Gutter(this))
    , m_findField(new QLineEdit(this))
{
    m_findField->setObjectName(QStringLiteral("codeFindField"));
    m_findField->setPlaceholderText(tr("Find (Enter: next, Shift+Enter: previous, Esc: close)"));
    m_findField->setClearButtonEnabled(true);
    m_findField->hide();
    m_findField->installEventFilter(this);
    connect(m_findField, &QLineEdit::returnPressed, this, [this] { find(m_findField->text()); });
    connect(m_findField, &QLineEdit::textEdited, this, [this](const QString &text) {
        // Incremental: from the start of the current match, so typing more keeps the same place.
        QTextCursor cursor = textCursor();
        cursor.setPosition(cursor.selectionStart());
        setTextCursor(cursor);
        find(text);
    });
    connect(document(), &QTextDocument::contentsChanged, this, [this] { m_numbersValid = false; });
    connect(this, &QPlainTextEdit::blockCountChanged, this, &CodeView::updateGutterWidth);
    connect(this, &QPlainTextEdit::updateRequest, this, [this](const QRect &rect, int dy) {
        if (dy != 0)
            m_gutter->scroll(0, dy);
        else
            m_gutter->update(0, rect.y(), m_gutter->width(), rect.height());
    });
    updateGutterWidth();
}

void CodeView::setNumbering(Numbering numbering)
{
    m_numbering = numbering;
    m_numbersValid = false;
    m_gutter->update();
}

const QVector<int> &CodeView::numbers() const
{
    if (m_numbersValid && m_numbers.size() == document()->blockCount())
        return m_numbers;
    m_numbers.clear();
    m_numbers.reserve(document()->blockCount());
    int oldLine = 0, newLine = 0;
    for (QTextBlock block = document()->begin(); block.isValid(); block = block.next()) {
        if (m_numbering == Numbering::Plain) {
            m_numbers.append(block.blockNumber() + 1);
            continue;
        }
        const QVariant kindValue = block.blockFormat().property(DiffView::LineKindProperty);
        const auto kind = kindValue.isValid() ? DiffView::LineKind(kindValue.toInt()) : DiffView::LineKind::Same;
        if (m_numbering == Numbering::DiffSide) {
            m_numbers.append(kind == DiffView::LineKind::Filler ? 0 : ++newLine);
            continue;
        }
        switch (kind) {
        case DiffView::LineKind::Removed: m_numbers.append(++oldLine); break;
        case DiffView::LineKind::Added: m_numbers.append(++newLine); break;
        case DiffView::LineKind::Same:
            ++oldLine;
            m_numbers.append(++newLine);
            break;
        case DiffView::LineKind::Filler: m_numbers.append(0); break;
        }
    }
    m_numbersValid = true;
    return m_numbers;
}

int CodeView::lineNumberOf(int block) const
{
    const QVector<int> &n = numbers();
    return block >= 0 && block < n.size() ? n.at(block) : 0;
}

int CodeView::gutterWidth() const
{
    int digits = 2;
    for (int max = std::max(1, document()->blockCount()); max >= 100; max /= 10)
        ++digits;
    return 10 + fontMetrics().horizontalAdvance(QLatin1Char('9')) * digits;
}

void CodeView::updateGutterWidth()
{
    setViewportMargins(gutterWidth(), 0, 0, 0);
    const QRect area = contentsRect();
    m_gutter->setGeometry(QRect(area.left(), area.top(), gutterWidth(), area.height()));
}

void CodeView::paintGutter(QPaintEvent *event)
{
    QPainter painter(m_gutter);
    const QPalette &p = palette();
    painter.fillRect(event->rect(), p.color(QPalette::AlternateBase));
    painter.setPen(p.color(QPalette::PlaceholderText));
    painter.setFont(font());
    const QVector<int> &n = numbers();
    QTextBlock block = firstVisibleBlock();
    int top = qRound(blockBoundingGeometry(block).translated(contentOffset()).top());
    const int right = m_gutter->width() - 5;
    const int current = textCursor().blockNumber();
    while (block.isValid() && top <= event->rect().bottom()) {
        const int height = qRound(blockBoundingRect(block).height());
        if (block.isVisible() && top + height >= event->rect().top()) {
            const int number = block.blockNumber() < n.size() ? n.at(block.blockNumber()) : 0;
            if (number > 0) {
                QFont f = font();
                f.setBold(block.blockNumber() == current);
                painter.setFont(f);
                painter.drawText(0, top, right, fontMetrics().height(), Qt::AlignRight | Qt::AlignVCenter,
                                 QString::number(number));
            }
        }
        top += height;
        block = block.next();
    }
}

bool CodeView::find(const QString &text, bool backwards)
{
    if (text.isEmpty())
        return false;
    const QTextDocument::FindFlags flags = backwards ? QTextDocument::FindBackward : QTextDocument::FindFlags();
    if (QPlainTextEdit::find(text, flags))
        return true;
    // Wrap around.
    QTextCursor cursor = textCursor();
    cursor.movePosition(backwards ? QTextCursor::End : QTextCursor::Start);
    setTextCursor(cursor);
    return QPlainTextEdit::find(text, flags);
}

bool CodeView::eventFilter(QObject *watched, QEvent *event)
{
    // Esc closes the find bar before any window shortcut on Esc sees it.
    if (watched == m_findField && event->type() == QEvent::ShortcutOverride
        && static_cast<QKeyEvent *>(event)->key() == Qt::Key_Escape) {
        event->accept();
        return true;
    }
    if (watched == m_findField && event->type() == QEvent::KeyPress) {
        auto *key = static_cast<QKeyEvent *>(event);
        if (key->key() == Qt::Key_Escape) {
            m_findField->hide();
            setFocus(Qt::OtherFocusReason);
            return true;
        }
        if ((key->key() == Qt::Key_Return || key->key() == Qt::Key_Enter) && key->modifiers() & Qt::ShiftModifier) {
            find(m_findField->text(), true);
            return true;
        }
        if (key->matches(QKeySequence::FindNext) || key->matches(QKeySequence::FindPrevious)) {
            find(m_findField->text(), key->matches(QKeySequence::FindPrevious));
            return true;
        }
    }
    return QPlainTextEdit::eventFilter(watched, event);
}

bool CodeView::event(QEvent *event)
{
    if (event->type() == QEvent::ShortcutOverride) {
        // In code, Ctrl+F finds in the code (the window's own Find filters runs elsewhere), F3 finds again, and
        // Esc closes an open find bar before any window shortcut on Esc sees it.
        auto *key = static_cast<QKeyEvent *>(event);
        if (key->matches(QKeySequence::Find) || key->matches(QKeySequence::FindNext)
            || key->matches(QKeySequence::FindPrevious) || (m_findField->isVisible() && key->key() == Qt::Key_Escape)) {
            event->accept();
            return true;
        }
    }
    return QPlainTextEdit::event(event);
}

void CodeView::resizeEvent(QResizeEvent *event)
{
    QPlainTextEdit::resizeEvent(event);
    updateGutterWidth();
    placeFindField();
}

void CodeView::placeFindField()
{
    const int width = std::min(viewport()->width() - 12, 360);
    m_findField->setGeometry(viewport()->geometry().right() - width - 6, viewport()->geometry().top() + 4, width,
                             m_findField->sizeHint().height());
}

void CodeView::keyPressEvent(QKeyEvent *event)
{
    if (event->matches(QKeySequence::Find)) {
        placeFindField();
        m_findField->show();
        m_findField->raise();
        if (textCursor().hasSelection() && !textCursor().selectedText().contains(QChar::ParagraphSeparator))
            m_findField->setText(textCursor().selectedText());
        m_findField->setFocus(Qt::ShortcutFocusReason);
        m_findField->selectAll();
        event->accept();
        return;
    }
    if (event->matches(QKeySequence::FindNext) || event->matches(QKeySequence::FindPrevious)) {
        find(m_findField->text(), event->matches(QKeySequence::FindPrevious));
        event->accept();
        return;
    }
    if (event->key() == Qt::Key_Escape && m_findField->isVisible()) {
        m_findField->hide();
        event->accept();
        return;
    }
    QPlainTextEdit::keyPressEvent(event);
}

} // namespace autocomp
