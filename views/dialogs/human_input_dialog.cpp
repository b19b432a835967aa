#include "dialogs/human_input_dialog.h"
#include "editors/code_view.h"

#include "editors/code_highlighter.h"
#include "common/value_format.h"

#include <QDialogButtonBox>
#include <QFontDatabase>
#include <QGuiApplication>
#include <QHeaderView>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QScreen>
#include <QScrollBar>
#include <QSplitter>
#include <QTextCursor>
#include <QTimer>
#include <QTreeWidget>
#include <QVBoxLayout>

#include <cmath>

namespace autocomp {

namespace {

enum MenuColumn { NumberColumn, StrategyColumn, ChosenColumn, ImprovedColumn, BestGainColumn, MenuColumnCount };

QLabel *heading(const QString &text)
{
    auto *label = new QLabel(text);
    QFont font = label->font();
    font.setBold(true);
    label->setFont(font);
    return label;
}

// A widget of a heading over `content`, for a splitter pane.
QWidget *pane(QLabel *title, QWidget *content, QWidget *extra = nullptr)
{
    auto *widget = new QWidget;
    auto *layout = new QVBoxLayout(widget);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(3);
    layout->addWidget(title);
    if (extra)
        layout->addWidget(extra);
    layout->addWidget(content, 1);
    return widget;
}

} // namespace

HumanInputDialog::HumanInputDialog(Kind kind, qint64 parentId, const QString &text, const QString &language,
                                   QWidget *parent)
    : QDialog(parent)
    , m_kind(kind)
    , m_parentId(parentId)
    , m_language(language)
    , m_edit(new CodeView)
{
    const bool plan = kind == Plan;
    setObjectName(plan ? QStringLiteral("humanPlanDialog") : QStringLiteral("humanCodeDialog"));
    setWindowTitle(plan ? tr("Write a Plan under Candidate %1").arg(parentId)
                        : tr("Edit Code of Candidate %1").arg(parentId));
    auto *layout = new QVBoxLayout(this);
    auto *intro = new QLabel(
        plan ? tr("The plan joins the current iteration: the code models implement it from candidate %1's code, "
                  "and its candidates compete in the next beam selection. Pick the menu item it applies "
                  "so the schedule records it.")
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
    if (plan) {
        m_edit->setPlaceholderText(tr("Pick a menu item above, then say how to apply it to this code"));
        const QFont fixed = QFontDatabase::systemFont(QFontDatabase::FixedFont);
        m_parentCode = new CodeView;
        m_parentCode->setObjectName(QStringLiteral("humanPlanParentCode"));
        m_parentCode->setReadOnly(true);
        m_parentCode->setLineWrapMode(QPlainTextEdit::NoWrap);
        m_parentCode->setFont(fixed);
        m_figures = new QLabel;
        m_figures->setObjectName(QStringLiteral("humanPlanFigures"));
        m_figures->setWordWrap(true);
        m_figures->setTextFormat(Qt::PlainText);
        m_figures->setTextInteractionFlags(Qt::TextSelectableByMouse);

        m_menu = new QTreeWidget;
        m_menu->setObjectName(QStringLiteral("humanPlanMenu"));
        m_menu->setRootIsDecorated(false);
        m_menu->setUniformRowHeights(true);
        m_menu->setAlternatingRowColors(true);
        m_menu->setColumnCount(MenuColumnCount);
        m_menu->setHeaderLabels({tr("#"), tr("Strategy"), tr("Chosen"), tr("Improved"), tr("Best gain")});
        m_menu->headerItem()->setToolTip(ChosenColumn, tr("Plans of this agent's runs that chose it"));
        m_menu->headerItem()->setToolTip(
            ImprovedColumn, tr("Its correct candidates that were faster than their parent beyond the timing's noise"));
        m_menu->headerItem()->setToolTip(
            BestGainColumn, tr("The best parent score / own score among its candidates (2× = twice as fast)"));
        m_menu->header()->setStretchLastSection(false);
        m_menu->header()->setSectionResizeMode(StrategyColumn, QHeaderView::Stretch);
        for (int column : {NumberColumn, ChosenColumn, ImprovedColumn, BestGainColumn})
            m_menu->header()->setSectionResizeMode(column, QHeaderView::ResizeToContents);
        connect(m_menu, &QTreeWidget::currentItemChanged, this, [this](QTreeWidgetItem *item) {
            if (item)
                pickMenuItem(m_menu->indexOfTopLevelItem(item) + 1);
        });

        m_prompt = new CodeView;
        m_prompt->setObjectName(QStringLiteral("humanPlanPrompt"));
        m_prompt->setReadOnly(true);
        m_prompt->setFont(fixed);
        m_prompt->setLineWrapMode(QPlainTextEdit::WidgetWidth);
        CodeHighlighter::attach(m_prompt->document(), QStringLiteral("markdown"));
        m_promptError = new QLabel;
        m_promptError->setObjectName(QStringLiteral("humanPlanPromptError"));
        m_promptError->setWordWrap(true);
        m_promptError->setTextFormat(Qt::PlainText);
        m_promptError->hide();
        m_promptTimer = new QTimer(this);
        m_promptTimer->setSingleShot(true);
        m_promptTimer->setInterval(150);
        connect(m_promptTimer, &QTimer::timeout, this, &HumanInputDialog::updatePrompt);
        connect(m_edit, &QPlainTextEdit::textChanged, m_promptTimer, qOverload<>(&QTimer::start));

        auto *right = new QSplitter(Qt::Vertical);
        right->setChildrenCollapsible(false);
        right->addWidget(pane(heading(tr("Menu: pick the strategy to apply")), m_menu));
        right->addWidget(pane(heading(tr("Your plan")), m_edit));
        right->addWidget(pane(heading(tr("Prompt sent to the code model")), m_prompt, m_promptError));
        right->setStretchFactor(0, 3);
        right->setStretchFactor(1, 2);
        right->setStretchFactor(2, 3);
        auto *split = new QSplitter(Qt::Horizontal);
        split->setObjectName(QStringLiteral("humanPlanSplitter"));
        split->setChildrenCollapsible(false);
        split->addWidget(pane(heading(tr("Candidate %1").arg(parentId)), m_parentCode, m_figures));
        split->addWidget(right);
        split->setStretchFactor(0, 1);
        split->setStretchFactor(1, 1);
        layout->addWidget(split, 1);
    } else {
        layout->addWidget(m_edit, 1);
    }
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Cancel);
    QPushButton *submit = buttons->addButton(plan ? tr("Add Plan") : tr("Evaluate"), QDialogButtonBox::AcceptRole);
    submit->setObjectName(QStringLiteral("submitHumanButton"));
    submit->setEnabled(!text.trimmed().isEmpty());
    connect(m_edit, &QPlainTextEdit::textChanged, submit,
            [this, submit] { submit->setEnabled(!m_edit->toPlainText().trimmed().isEmpty()); });
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    layout->addWidget(buttons);
    // As large as is comfortable, within the screen (1280x800 included).
    QSize size = plan ? QSize(1180, 760) : QSize(820, 640);
    if (const QScreen *screen = (parent ? parent->screen() : QGuiApplication::primaryScreen()))
        size = size.boundedTo(screen->availableSize() * 0.94);
    resize(size);
}

QString HumanInputDialog::text() const { return m_edit->toPlainText(); }

void HumanInputDialog::setPlanContext(const PlanContext &context)
{
    if (m_kind != Plan)
        return;
    m_context = context;
    CodeHighlighter::attach(m_parentCode->document(), m_language);
    m_parentCode->setPlainText(context.parent.code);
    m_parentCode->setPlaceholderText(tr("Candidate %1 has no code.").arg(m_parentId));
    QStringList figures{context.figures};
    if (!context.metrics.isEmpty())
        figures << context.metrics;
    m_figures->setText(figures.join(QLatin1Char('\n')));

    const QSignalBlocker blocker(m_menu);
    m_menu->clear();
    for (int i = 0; i < context.menu.size(); ++i) {
        const MenuEntry &entry = context.menu.at(i);
        auto *item = new QTreeWidgetItem(m_menu);
        item->setText(NumberColumn, QString::number(i + 1));
        item->setText(StrategyColumn, entry.text);
        item->setToolTip(StrategyColumn, entry.text);
        item->setText(ChosenColumn, QString::number(entry.chosen));
        item->setText(ImprovedColumn, entry.chosen > 0 ? QString::number(entry.improved) : QString());
        item->setText(BestGainColumn,
                      std::isfinite(entry.bestGain) ? ValueFormat::factor(entry.bestGain) : QStringLiteral("–"));
        for (int column : {NumberColumn, ChosenColumn, ImprovedColumn, BestGainColumn})
            item->setTextAlignment(column, Qt::AlignRight | Qt::AlignVCenter);
    }
    const QString records = !context.recordsError.isEmpty()
        ? tr("No records: %1").arg(context.recordsError)
        : tr("Chosen, improved and best gain: over %n run(s) of this agent in this store.", nullptr, context.runs);
    m_menu->setToolTip(records);
    m_menu->setStatusTip(records);
    updatePrompt();
}

bool HumanInputDialog::pickMenuItem(int number)
{
    if (m_kind != Plan || number < 1 || number > m_context.menu.size())
        return false;
    const QString line =
        QStringLiteral("Chosen optimization: %1. %2").arg(number).arg(m_context.menu.at(number - 1).text);
    static const QRegularExpression s_chosen(QStringLiteral("^\\s*\\**\\s*chosen optimi[sz]ation\\b.*$"),
                                             QRegularExpression::CaseInsensitiveOption
                                                 | QRegularExpression::MultilineOption);
    QString plan = m_edit->toPlainText();
    const QRegularExpressionMatch match = s_chosen.match(plan);
    if (match.hasMatch())
        plan.replace(match.capturedStart(), match.capturedLength(), line);
    else
        plan = plan.trimmed().isEmpty() ? QString(line + QLatin1Char('\n')) : QString(line + QLatin1Char('\n') + plan);
    m_edit->setPlainText(plan);
    m_edit->moveCursor(QTextCursor::End);
    {
        const QSignalBlocker blocker(m_menu);
        m_menu->setCurrentItem(m_menu->topLevelItem(number - 1));
    }
    updatePrompt();
    return true;
}

QString HumanInputDialog::promptPreview()
{
    if (m_promptTimer && m_promptTimer->isActive())
        updatePrompt();
    return m_prompt ? m_prompt->toPlainText() : QString();
}

void HumanInputDialog::updatePrompt()
{
    if (!m_prompt)
        return;
    m_promptTimer->stop();
    if (!m_context.prompt) {
        m_prompt->clear();
        return;
    }
    QString error;
    const QString prompt = m_context.prompt(m_edit->toPlainText(), &error);
    m_promptError->setText(error.isEmpty() ? QString() : tr("No preview: %1").arg(error));
    m_promptError->setVisible(!error.isEmpty());
    m_prompt->setPlainText(prompt);
    // The plan's place in the prompt is shown and marked, so what is typed is seen where the model reads it.
    const QString plan = m_edit->toPlainText().trimmed();
    const qsizetype at = plan.isEmpty() ? -1 : prompt.indexOf(plan);
    if (at < 0) {
        m_prompt->setExtraSelections({});
        return;
    }
    QTextCursor cursor(m_prompt->document());
    cursor.setPosition(int(at));
    cursor.setPosition(int(at + plan.size()), QTextCursor::KeepAnchor);
    QTextEdit::ExtraSelection selection;
    selection.cursor = cursor;
    const QColor highlight = palette().color(QPalette::Highlight);
    selection.format.setBackground(QColor(highlight.red(), highlight.green(), highlight.blue(), 60));
    m_prompt->setExtraSelections({selection});
    QTextCursor end(m_prompt->document());
    end.setPosition(int(at + plan.size()));
    m_prompt->setTextCursor(end);
    m_prompt->centerCursor();
}

} // namespace autocomp
