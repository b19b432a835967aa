#pragma once

#include <QPlainTextEdit>
#include <QVector>

class QLineEdit;

namespace autocomp {

// A plain-text code view with a line-number gutter and a find bar (Ctrl+F; Enter and F3 find the next match,
// Shift+Enter and Shift+F3 the previous one, Esc closes the bar).
//
// Numbering: Plain numbers every block. In a diff, blocks carry DiffView::LineKindProperty: DiffSide numbers
// the lines of one side and leaves filler rows blank; DiffUnified gives removed lines their old number and
// same or added lines their new one.
class CodeView : public QPlainTextEdit
{
    Q_OBJECT
public:
    enum class Numbering { Plain, DiffSide, DiffUnified };

    explicit CodeView(QWidget *parent = nullptr);

    void setNumbering(Numbering numbering);
    Numbering numbering() const { return m_numbering; }
    // The number shown beside block `block` (0: none), as painted.
    int lineNumberOf(int block) const;
    int gutterWidth() const;
    // Finds `text` from the cursor on (backwards: before it), wrapping around; false when it is nowhere.
    bool find(const QString &text, bool backwards = false);
    QLineEdit *findField() const { return m_findField; }

    void paintGutter(QPaintEvent *event);

protected:
    bool event(QEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;
    void keyPressEvent(QKeyEvent *event) override;
    bool eventFilter(QObject *watched, QEvent *event) override;

private:
    void updateGutterWidth();
    void placeFindField();
    const QVector<int> &numbers() const;

    QWidget *m_gutter;
    QLineEdit *m_findField;
    Numbering m_numbering = Numbering::Plain;
    mutable QVector<int> m_numbers; // per block; recomputed when the document changed
    mutable bool m_numbersValid = false;
};

} // namespace autocomp
