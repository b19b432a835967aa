#include "candidate_inspector.h"

#include "code_highlighter.h"
#include "status_palette.h"
#include "value_format.h"

#include <QFontDatabase>
#include <QHeaderView>
#include <QLabel>
#include <QPlainTextEdit>
#include <QSyntaxHighlighter>
#include <QTableWidget>
#include <QTextBrowser>
#include <QVBoxLayout>

namespace autocomp {

namespace {

QString escaped(const QString &text)
{
    return text.toHtmlEscaped();
}

// Preformatted text that wraps, so long log and prompt lines stay readable.
QString pre(const QString &text)
{
    return QStringLiteral("<pre style=\"white-space: pre-wrap;\">") + escaped(text) + QStringLiteral("</pre>");
}

QString list(const QStringList &items)
{
    QString html = QStringLiteral("<ul>");
    for (const QString &item : items)
        html += QStringLiteral("<li>") + escaped(item) + QStringLiteral("</li>");
    return html + QStringLiteral("</ul>");
}

QTableWidgetItem *item(const QString &text, bool number = false)
{
    auto *result = new QTableWidgetItem(text);
    if (number)
        result->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    return result;
}

} // namespace

CandidateInspector::CandidateInspector(QWidget *parent)
    : QTabWidget(parent)
    , m_menuItemLabel(new QLabel)
    , m_planView(new QTextBrowser)
    , m_codeView(new QPlainTextEdit)
    , m_evaluationView(new QTextBrowser)
    , m_promptsView(new QTextBrowser)
    , m_llmView(new QTableWidget)
{
    setObjectName(QStringLiteral("candidateInspector"));
    setDocumentMode(true);

    auto *planPage = new QWidget;
    auto *planLayout = new QVBoxLayout(planPage);
    planLayout->setContentsMargins(6, 6, 6, 6);
    m_menuItemLabel->setObjectName(QStringLiteral("menuItemLabel"));
    m_menuItemLabel->setWordWrap(true);
    m_menuItemLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_planView->setObjectName(QStringLiteral("planView"));
    m_planView->setOpenExternalLinks(true);
    m_planView->setPlaceholderText(tr("No plan: this candidate was not derived from a plan."));
    planLayout->addWidget(m_menuItemLabel);
    planLayout->addWidget(m_planView, 1);
    addTab(planPage, tr("Plan"));

    m_codeView->setObjectName(QStringLiteral("codeView"));
    m_codeView->setReadOnly(true);
    m_codeView->setLineWrapMode(QPlainTextEdit::NoWrap);
    m_codeView->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_codeView->setPlaceholderText(tr("No code yet."));
    addTab(m_codeView, tr("Code"));

    m_evaluationView->setObjectName(QStringLiteral("evaluationView"));
    addTab(m_evaluationView, tr("Evaluation"));

    m_promptsView->setObjectName(QStringLiteral("promptsView"));
    m_promptsView->setPlaceholderText(tr("No LLM calls recorded for this candidate."));
    addTab(m_promptsView, tr("Prompts"));

    m_llmView->setObjectName(QStringLiteral("llmView"));
    m_llmView->setColumnCount(8);
    m_llmView->setHorizontalHeaderLabels({tr("Phase"), tr("Model"), tr("Status"), tr("Tokens in"), tr("Tokens out"),
                                          tr("Cost"), tr("Latency"), tr("Retries")});
    m_llmView->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_llmView->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_llmView->verticalHeader()->hide();
    m_llmView->horizontalHeader()->setStretchLastSection(true);
    addTab(m_llmView, tr("LLM"));

    clear();
}

void CandidateInspector::clear()
{
    m_candidateId = 0;
    m_menuItemLabel->setText(tr("Select a candidate in the tree."));
    m_planView->clear();
    m_codeView->clear();
    m_evaluationView->clear();
    m_promptsView->clear();
    m_llmView->setRowCount(0);
}

void CandidateInspector::setCandidate(const Candidate &candidate, const QList<LlmCall> &calls,
                                      const QList<StepResult> &steps, const QString &metric, const QString &language)
{
    m_candidateId = candidate.id;
    showPlan(candidate);

    if (language != m_language || m_codeView->document()->findChildren<QSyntaxHighlighter *>().isEmpty()) {
        m_language = language;
        CodeHighlighter::attach(m_codeView->document(), language);
    }
    m_codeView->setPlainText(candidate.code);

    showEvaluation(candidate, steps, metric);
    showPrompts(calls);
    showLlmUsage(calls);
}

void CandidateInspector::showPlan(const Candidate &candidate)
{
    QString heading = tr("<b>Candidate %1</b> · iteration %2 · %3").arg(candidate.id).arg(candidate.iteration).arg(toString(candidate.origin));
    if (candidate.parentId != 0)
        heading += tr(" · from candidate %1").arg(candidate.parentId);
    if (!candidate.menuItem.isEmpty())
        heading += QStringLiteral("<br>") + tr("<b>Optimization:</b> %1").arg(escaped(candidate.menuItem));
    else if (candidate.origin == CandidateOrigin::Root)
        heading += QStringLiteral("<br>") + tr("The starting code of the run.");
    m_menuItemLabel->setText(heading);
    m_planView->setMarkdown(candidate.plan);
}

void CandidateInspector::showEvaluation(const Candidate &candidate, const QList<StepResult> &steps, const QString &metric)
{
    const QColor statusColor = StatusPalette::foreground(candidate.status, palette());
    const QString statusText = escaped(toString(candidate.status).replace(QLatin1Char('_'), QLatin1Char(' ')));
    QString html = QStringLiteral("<h3>");
    if (statusColor.isValid())
        html += QStringLiteral("<span style=\"color: %1;\">%2</span>").arg(statusColor.name(), statusText);
    else
        html += statusText;
    if (candidate.hasScore())
        html += QStringLiteral(" · ") + escaped(ValueFormat::score(candidate.score, metric));
    html += QStringLiteral("</h3>");
    if (candidate.inBeam)
        html += QStringLiteral("<p>") + tr("In the current beam.") + QStringLiteral("</p>");
    if (!candidate.error.isEmpty())
        html += QStringLiteral("<h4>") + tr("Error") + QStringLiteral("</h4>") + pre(candidate.error);

    if (!candidate.metrics.isEmpty()) {
        html += QStringLiteral("<h4>") + tr("Metrics") + QStringLiteral("</h4><table cellspacing=\"2\" cellpadding=\"3\">");
        for (auto it = candidate.metrics.begin(); it != candidate.metrics.end(); ++it)
            html += QStringLiteral("<tr><td><b>%1</b></td><td>%2</td></tr>")
                        .arg(escaped(it.key()), escaped(ValueFormat::metricValue(it.key(), it.value())));
        html += QStringLiteral("</table>");
    }
    if (!candidate.feedback.isEmpty())
        html += QStringLiteral("<h4>") + tr("Hardware feedback") + QStringLiteral("</h4>") + list(candidate.feedback);
    if (!candidate.flags.isEmpty())
        html += QStringLiteral("<h4>") + tr("Flags") + QStringLiteral("</h4>") + list(candidate.flags);

    if (!steps.isEmpty()) {
        html += QStringLiteral("<h4>") + tr("Steps") + QStringLiteral("</h4>");
        html += QStringLiteral("<table cellspacing=\"2\" cellpadding=\"3\"><tr><th align=\"left\">%1</th><th align=\"left\">%2</th>"
                               "<th align=\"left\">%3</th></tr>")
                    .arg(tr("Step"), tr("Exit"), tr("Duration"));
        for (const StepResult &step : steps) {
            QString exit = QString::number(step.exitCode);
            if (step.timedOut)
                exit = tr("timed out");
            else if (step.crashed)
                exit = tr("crashed");
            html += QStringLiteral("<tr><td>%1</td><td>%2</td><td>%3</td></tr>")
                        .arg(escaped(step.name), escaped(exit), escaped(ValueFormat::durationMs(step.durationMs)));
        }
        html += QStringLiteral("</table>");
        for (const StepResult &step : steps) {
            if (step.log.trimmed().isEmpty())
                continue;
            html += QStringLiteral("<p><b>") + tr("Log of %1").arg(escaped(step.name)) + QStringLiteral("</b>");
            if (!step.command.isEmpty())
                html += QStringLiteral("<br><code>") + escaped(step.command.join(QLatin1Char(' '))) + QStringLiteral("</code>");
            html += QStringLiteral("</p>") + pre(step.log);
        }
    } else if (!isFinal(candidate.status)) {
        html += QStringLiteral("<p>") + tr("Not evaluated yet.") + QStringLiteral("</p>");
    }
    m_evaluationView->setHtml(html);
}

void CandidateInspector::showPrompts(const QList<LlmCall> &calls)
{
    if (calls.isEmpty()) {
        m_promptsView->clear();
        return;
    }
    QString html;
    int number = 0;
    for (const LlmCall &call : calls) {
        ++number;
        html += QStringLiteral("<h3>%1. %2 · %3</h3>").arg(number).arg(escaped(call.phase), escaped(call.model));
        if (call.status != QLatin1String("ok") && !call.status.isEmpty())
            html += QStringLiteral("<p><b>") + escaped(call.status) + QStringLiteral("</b> ") + escaped(call.error) + QStringLiteral("</p>");
        html += QStringLiteral("<h4>") + tr("Prompt") + QStringLiteral("</h4>") + pre(call.prompt);
        if (!call.reasoning.isEmpty())
            html += QStringLiteral("<h4>") + tr("Reasoning") + QStringLiteral("</h4>") + pre(call.reasoning);
        html += QStringLiteral("<h4>") + tr("Response") + QStringLiteral("</h4>") + pre(call.response);
        html += QStringLiteral("<hr>");
    }
    m_promptsView->setHtml(html);
}

void CandidateInspector::showLlmUsage(const QList<LlmCall> &calls)
{
    m_llmView->setRowCount(calls.isEmpty() ? 0 : calls.size() + 1);
    qint64 tokensIn = 0;
    qint64 tokensOut = 0;
    double usd = 0;
    double latencyMs = 0;
    int retries = 0;
    int row = 0;
    for (const LlmCall &call : calls) {
        m_llmView->setItem(row, 0, item(call.phase));
        m_llmView->setItem(row, 1, item(call.model));
        m_llmView->setItem(row, 2, item(call.status));
        m_llmView->setItem(row, 3, item(QString::number(call.tokensIn), true));
        m_llmView->setItem(row, 4, item(QString::number(call.tokensOut), true));
        m_llmView->setItem(row, 5, item(ValueFormat::dollars(call.usd), true));
        m_llmView->setItem(row, 6, item(ValueFormat::durationMs(call.latencyMs), true));
        m_llmView->setItem(row, 7, item(QString::number(call.retries), true));
        tokensIn += call.tokensIn;
        tokensOut += call.tokensOut;
        usd += call.usd;
        latencyMs += call.latencyMs;
        retries += call.retries;
        ++row;
    }
    if (calls.isEmpty())
        return;
    const QList<QTableWidgetItem *> totals{item(tr("Total")),
                                           item(tr("%n call(s)", nullptr, int(calls.size()))),
                                           item(QString()),
                                           item(QString::number(tokensIn), true),
                                           item(QString::number(tokensOut), true),
                                           item(ValueFormat::dollars(usd), true),
                                           item(ValueFormat::durationMs(latencyMs), true),
                                           item(QString::number(retries), true)};
    for (int column = 0; column < totals.size(); ++column) {
        QFont font = totals.at(column)->font();
        font.setBold(true);
        totals.at(column)->setFont(font);
        m_llmView->setItem(row, column, totals.at(column));
    }
    m_llmView->resizeColumnsToContents();
}

} // namespace autocomp
