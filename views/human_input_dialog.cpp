#include "human_input_dialog.h"
#include "code_view.h"

#include "code_highlighter.h"

#include <QDialogButtonBox>
#include <QFontDatabase>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QVBoxLayout>

namespace autocomp {

HumanInputDialog::HumanInputDialog(Kind kind, qint64 parentId, const QString &text, const QString &language, QWidget *parent)
    : QDialog(parent), m_kind(kind), m_parentId(parentId), m_edit(new CodeView)
{
    const bool plan = kind == Plan;
    setObjectName(plan ? QStringLiteral("humanPlanDialog") : QStringLiteral("humanCodeDialog"));
    setWindowTitle(plan ? tr("Write a Plan under Candidate %1").arg(parentId) : tr("Edit Code of Candidate %1").arg(parentId));
    auto *layout = new QVBoxLayout(this);
    auto *intro = new QLabel(plan ? tr("The plan joins the current iteration: the code models implement it from candidate %1's code, "
                                       "and its candidates compete in the next beam selection. Name the menu item it applies "
                                       "(\"Chosen optimization: 3. ...\") so the schedule records it.")
                                        .arg(parentId)
                                  : tr("The code is evaluated as it is and joins the next beam selection as a child of candidate %1.")
                                        .arg(parentId));
    intro->setWordWrap(true);
    layout->addWidget(intro);
    m_edit->setObjectName(plan ? QStringLiteral("humanPlanEdit") : QStringLiteral("humanCodeEdit"));
    m_edit->setPlainText(text);
    if (!plan) {
        m_edit->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
        m_edit->setLineWrapMode(QPlainTextEdit::NoWrap);
    }
    CodeHighlighter::attach(m_edit->document(), plan ? QStringLiteral("markdown") : language);
    layout->addWidget(m_edit, 1);
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Cancel);
    QPushButton *submit = buttons->addButton(plan ? tr("Add Plan") : tr("Evaluate"), QDialogButtonBox::AcceptRole);
    submit->setObjectName(QStringLiteral("submitHumanButton"));
    submit->setEnabled(!text.trimmed().isEmpty());
    connect(m_edit, &QPlainTextEdit::textChanged, submit, [this, submit] { submit->setEnabled(!m_edit->toPlainText().trimmed().isEmpty()); });
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    layout->addWidget(buttons);
    resize(820, 640);
}

QString HumanInputDialog::text() const
{
    return m_edit->toPlainText();
}

} // namespace autocomp
