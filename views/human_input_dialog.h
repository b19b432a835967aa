#pragma once

#include <QDialog>

class QPlainTextEdit;

namespace autocomp {

// What a human adds to a running search under one candidate: a plan (the LLM writes the code) or
// edited code (evaluated as it is).
class HumanInputDialog : public QDialog
{
    Q_OBJECT
public:
    enum Kind { Plan, Code };

    // `text` prefills the editor (the candidate's code for Code); `language` picks its highlighting.
    HumanInputDialog(Kind kind, qint64 parentId, const QString &text, const QString &language, QWidget *parent = nullptr);

    Kind kind() const { return m_kind; }
    qint64 parentId() const { return m_parentId; }
    QString text() const;
    QPlainTextEdit *editor() const { return m_edit; }

private:
    Kind m_kind;
    qint64 m_parentId;
    QPlainTextEdit *m_edit;
};

} // namespace autocomp
