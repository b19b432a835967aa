#include "panels/candidate_inspector.h"
#include "editors/code_view.h"

#include "editors/code_highlighter.h"
#include "common/status_palette.h"
#include "common/value_format.h"
#include "live/shown_run.h"
#include "store/run_store.h"

#include <QCoreApplication>
#include <QDesktopServices>
#include <QDir>
#include <QFileInfo>
#include <QFontDatabase>
#include <QJsonObject>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QPlainTextEdit>
#include <QRegularExpression>
#include <QSyntaxHighlighter>
#include <QTableWidget>
#include <QTextBlock>
#include <QTextBrowser>
#include <QUrl>
#include <QVBoxLayout>

namespace autocomp {

namespace {

QString escaped(const QString &text) { return text.toHtmlEscaped(); }

// Preformatted text that wraps, so long log and prompt lines stay readable.
QString pre(const QString &text)
{
    return QStringLiteral("<pre style=\"white-space: pre-wrap;\">") + escaped(text) + QStringLiteral("</pre>");
}

// A log as preformatted text that keeps its line breaks, with every place in the candidate's own source file
// linked to that line of the Code tab: "candidate.cpp:42:7: error", ".../work/candidate.py:12",
// 'File ".../candidate.py", line 12' (the evaluator writes the code as candidate.EXT in the job's work/).
QString preWithLinks(const QString &text)
{
    static const QRegularExpression s_place(QStringLiteral(
        "(?<![\\w.-])(?:[^\\s:'\"()\\[\\]]*/)?candidate\\.[A-Za-z0-9_]+(?::(\\d+)(?::\\d+)?|\", line (\\d+))"));
    QString html = QStringLiteral("<pre style=\"white-space: pre-wrap;\">");
    qsizetype position = 0;
    for (auto it = s_place.globalMatch(text); it.hasNext();) {
        const QRegularExpressionMatch m = it.next();
        const QString line = m.captured(1).isEmpty() ? m.captured(2) : m.captured(1);
        if (line.toInt() < 1)
            continue;
        html += escaped(text.mid(position, m.capturedStart() - position));
        html += QStringLiteral("<a href=\"autocomp-line:%1\">%2</a>").arg(line, escaped(m.captured()));
        position = m.capturedEnd();
    }
    return html + escaped(text.mid(position)) + QStringLiteral("</pre>");
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

// A metric with its unit, a fraction as a percentage, the achieved GFLOP/s with its share of the measured roofline.
QString metricText(const QString &key, const QJsonValue &value, const QJsonObject &metrics, const QString &unit)
{
    if (key == QLatin1String("duplicate_of") && value.toInteger() > 0)
        return QStringLiteral("#%1").arg(value.toInteger());
    if (key == QLatin1String("noise_floor") && value.isDouble())
        return QCoreApplication::translate(
                   "autocomp::CandidateInspector",
                   "±%1 % (how much separate evaluations of the same code differ on this target; "
                   "added to the interval on both sides)")
            .arg(QLocale::c().toString(value.toDouble() * 100, 'g', 3));
    if (value.isDouble() && (key.endsWith(QLatin1String("_fraction")) || key.endsWith(QLatin1String("_rate"))))
        return QLocale::c().toString(value.toDouble() * 100, 'f', 1) + QStringLiteral(" %");
    QString text = ValueFormat::metricValue(key, value, unit);
    const double bound = metrics.value(QStringLiteral("roofline_bound_gflops")).toDouble();
    if (key == QLatin1String("gflops") && value.isDouble() && bound > 0)
        text += QCoreApplication::translate("autocomp::CandidateInspector", " (%1 % of the roofline bound, %2)")
                    .arg(QLocale::c().toString(value.toDouble() / bound * 100, 'f', 0),
                         ValueFormat::figure(bound, QStringLiteral("gflops")));
    return text;
}

} // namespace

CandidateInspector::CandidateInspector(QWidget *parent)
    : QTabWidget(parent)
    , m_menuItemLabel(new QLabel)
    , m_planView(new QTextBrowser)
    , m_codeView(new CodeView)
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
    // Its links open the code at a line or the evaluation's folder, never a page inside the view.
    m_evaluationView->setOpenLinks(false);
    connect(m_evaluationView, &QTextBrowser::anchorClicked, this, &CandidateInspector::linkClicked);
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

void CandidateInspector::setShownRun(const ShownRun *run)
{
    connect(run, &ShownRun::shown, this, &CandidateInspector::clear);
    connect(run, &ShownRun::selectionCleared, this, &CandidateInspector::clear);
    connect(run, &ShownRun::candidateSelected, this, [this, run](const Candidate &candidate) {
        // The copies the tree and the graph show, so the inspector never states another status or beam
        // membership; the score's context: the speedups over the run's root and the candidate's parent.
        RunStore *store = run->store();
        m_metricUnit = run->run().metricUnit;
        setCandidate(candidate, store->llmCallsForCandidate(candidate.id), store->evaluationSteps(candidate.id),
                     run->run().metric, run->language(), run->lookup(run->rootCandidateId()),
                     run->lookup(candidate.parentId));
    });
}

void CandidateInspector::clear()
{
    m_candidateId = 0;
    m_highlightedLine = 0;
    m_codeView->setExtraSelections({});
    m_headline.clear();
    m_menuItemLabel->setText(tr("Select a candidate in the tree."));
    m_planView->clear();
    m_codeView->clear();
    m_evaluationView->clear();
    m_promptsView->clear();
    m_llmView->setRowCount(0);
}

void CandidateInspector::setCandidate(const Candidate &candidate, const QList<LlmCall> &calls,
                                      const QList<StepResult> &steps, const QString &metric, const QString &language,
                                      const std::optional<Candidate> &root, const std::optional<Candidate> &parent)
{
    m_candidateId = candidate.id;
    showPlan(candidate);

    if (language != m_language || m_codeView->document()->findChildren<QSyntaxHighlighter *>().isEmpty()) {
        m_language = language;
        CodeHighlighter::attach(m_codeView->document(), language);
    }
    m_codeView->setPlainText(candidate.code);
    m_highlightedLine = 0;
    m_codeView->setExtraSelections({});

    showEvaluation(candidate, steps, metric, root, parent);
    showPrompts(calls);
    showLlmUsage(calls);
}

void CandidateInspector::showPlan(const Candidate &candidate)
{
    QString heading = tr("<b>Candidate %1</b> · iteration %2 · %3")
                          .arg(candidate.id)
                          .arg(candidate.iteration)
                          .arg(toString(candidate.origin));
    if (candidate.parentId != 0)
        heading += tr(" · from candidate %1").arg(candidate.parentId);
    if (!candidate.menuItem.isEmpty())
        heading += QStringLiteral("<br>") + tr("<b>Optimization:</b> %1").arg(escaped(candidate.menuItem));
    else if (candidate.origin == CandidateOrigin::Root)
        heading += QStringLiteral("<br>") + tr("The starting code of the run.");
    m_menuItemLabel->setText(heading);
    m_planView->setMarkdown(candidate.plan);
}

QString CandidateInspector::headline(const Candidate &candidate, const QString &metric,
                                     const std::optional<Candidate> &root, const std::optional<Candidate> &parent,
                                     const QString &unit)
{
    QStringList parts{statusWord(candidate)};
    const qint64 original = candidate.metrics.value(QStringLiteral("duplicate_of")).toInteger();
    if (candidate.status == CandidateStatus::Duplicate && original > 0)
        parts.last() = tr("duplicate of #%1").arg(original);
    else if (original > 0)
        parts << tr("same code as #%1 (another measurement)").arg(original); // an imported run's repeated step
    if (!candidate.hasScore())
        return parts.join(QStringLiteral(" · "));
    parts << ValueFormat::figure(candidate.score, metric, unit);
    const std::optional<ScoreInterval> interval = scoreInterval(candidate);
    const auto speedupOver = [&](const Candidate &base) { return ValueFormat::factor(base.score / candidate.score); };
    const bool hasRoot = root && root->id != candidate.id && root->hasScore() && root->score > 0 && candidate.score > 0;
    if (hasRoot) {
        QString text = tr("%1 root").arg(speedupOver(*root));
        // The speedup's own 95 % interval, from the score's: zero width (nothing shown) for a deterministic metric.
        if (interval && interval->low > 0 && interval->high > interval->low) {
            const double halfWidth = (root->score / interval->low - root->score / interval->high) / 2;
            text += QStringLiteral(" (±%1)").arg(ValueFormat::factorValue(halfWidth));
        }
        parts << text;
    }
    if (parent && parent->hasScore() && parent->score > 0 && candidate.score > 0
        && (!hasRoot || parent->id != root->id))
        parts << tr("%1 parent").arg(speedupOver(*parent));
    if (parent && withinNoise(candidate, *parent))
        parts << tr("within noise of #%1").arg(parent->id);
    const double roofline = candidate.metrics.value(QStringLiteral("roofline_fraction")).toDouble();
    if (roofline > 0)
        parts << tr("%1 % of the roofline bound (GFLOP/s)").arg(QLocale::c().toString(roofline * 100, 'f', 0));
    return parts.join(QStringLiteral(" · "));
}

void CandidateInspector::showEvaluation(const Candidate &candidate, const QList<StepResult> &steps,
                                        const QString &metric, const std::optional<Candidate> &root,
                                        const std::optional<Candidate> &parent)
{
    const QColor statusColor = StatusPalette::foreground(candidate.status, palette());
    m_headline = headline(candidate, metric, root, parent, m_metricUnit);
    // The status word in its colour, then the figures.
    const qsizetype split = m_headline.indexOf(QStringLiteral(" · "));
    const QString first = split < 0 ? m_headline : m_headline.left(split);
    const QString rest = split < 0 ? QString() : m_headline.mid(split);
    QString html = QStringLiteral("<h3>");
    if (statusColor.isValid())
        html += QStringLiteral("<span style=\"color: %1;\">%2</span>").arg(statusColor.name(), escaped(first));
    else
        html += escaped(first);
    html += escaped(rest) + QStringLiteral("</h3>");
    if (parent && withinNoise(candidate, *parent))
        html += QStringLiteral("<p style=\"color: gray;\">")
            + (candidate.metrics.contains(QStringLiteral("noise_floor"))
                   ? tr("Its interval (the paired timing's 95 % interval, widened by the target's run-to-run noise "
                        "floor) overlaps that of its parent #%1: the difference is within the timing's noise, "
                        "not an improvement.")
                   : tr("Its 95 % interval overlaps that of its parent #%1: the difference is within the timing's "
                        "noise, not an improvement."))
                  .arg(parent->id)
            + QStringLiteral("</p>");
    if (candidate.status == CandidateStatus::Cancelled)
        html += QStringLiteral("<p>") + tr("Its work was in flight when the run stopped; resuming the run redoes it.")
            + QStringLiteral("</p>");
    if (candidate.inBeam)
        html += QStringLiteral("<p>") + tr("In the current beam.") + QStringLiteral("</p>");
    if (!candidate.error.isEmpty())
        html += QStringLiteral("<h4>") + tr("Error") + QStringLiteral("</h4>") + preWithLinks(candidate.error);

    if (!candidate.metrics.isEmpty()) {
        html += QStringLiteral("<h4>") + tr("Metrics")
            + QStringLiteral("</h4><table cellspacing=\"2\" cellpadding=\"3\">");
        for (auto it = candidate.metrics.begin(); it != candidate.metrics.end(); ++it)
            html += QStringLiteral("<tr><td><b>%1</b></td><td>%2</td></tr>")
                        .arg(escaped(it.key()),
                             escaped(metricText(it.key(), it.value(), candidate.metrics,
                                                it.key() == metric ? m_metricUnit : QString())));
        html += QStringLiteral("</table>");
    }
    if (!candidate.feedback.isEmpty())
        html += QStringLiteral("<h4>") + tr("Hardware feedback") + QStringLiteral("</h4>") + list(candidate.feedback);
    if (!candidate.flags.isEmpty())
        html += QStringLiteral("<h4>") + tr("Flags") + QStringLiteral("</h4>") + list(candidate.flags);

    if (!steps.isEmpty()) {
        html += QStringLiteral("<h4>") + tr("Steps") + QStringLiteral("</h4>");
        html +=
            QStringLiteral(
                "<table cellspacing=\"2\" cellpadding=\"3\"><tr><th align=\"left\">%1</th><th align=\"left\">%2</th>"
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
                html += QStringLiteral("<br><code>") + escaped(step.command.join(QLatin1Char(' ')))
                    + QStringLiteral("</code>");
            html += QStringLiteral("</p>") + preWithLinks(step.log);
        }
        QString why;
        const QString folder = evaluationFolder(steps, &why);
        html += QStringLiteral("<p id=\"evaluationFolder\"><b>") + tr("Files:") + QStringLiteral("</b> ");
        if (!folder.isEmpty())
            html += QStringLiteral("<a href=\"%1\">%2</a>")
                        .arg(QUrl::fromLocalFile(folder).toString(QUrl::FullyEncoded).toHtmlEscaped(),
                             tr("Open the folder of the evaluation's files (%1)")
                                 .arg(escaped(QDir::toNativeSeparators(folder))));
        else
            html += QStringLiteral("<span style=\"color: gray;\">") + escaped(why) + QStringLiteral("</span>");
        html += QStringLiteral("</p>");
    } else if (!isFinal(candidate.status)) {
        html += QStringLiteral("<p>") + tr("Not evaluated yet.") + QStringLiteral("</p>");
    }
    m_evaluationView->setHtml(html);
}

QString CandidateInspector::evaluationFolder(const QList<StepResult> &steps, QString *why)
{
    // The evaluator's job directory is QDir::tempPath()/autocomp-eval-XXXXXX; its steps name files inside it.
    static const QRegularExpression s_jobDir(QStringLiteral("(/(?:[^/\\s'\"=]+/)*autocomp-eval-[^/\\s'\"]+)"));
    QString found;
    for (const StepResult &step : steps) {
        for (const QString &argument : step.command) {
            const QRegularExpressionMatch m = s_jobDir.match(argument);
            if (m.hasMatch()) {
                found = m.captured(1);
                break;
            }
        }
        if (!found.isEmpty())
            break;
    }
    if (steps.isEmpty()) {
        *why = tr("Not evaluated on this machine: no evaluation steps are recorded for it.");
        return {};
    }
    if (found.isEmpty()) {
        *why = tr("Its steps name no evaluation folder of this machine (evaluated elsewhere, or imported).");
        return {};
    }
    if (!QFileInfo(found).isDir()) {
        *why = tr("Its evaluation files (%1) are not on this machine: removed when the evaluation ended (set "
                  "evaluation.keep_workdirs: true in a run's configuration to keep them), or evaluated on another "
                  "machine.")
                   .arg(QDir::toNativeSeparators(found));
        return {};
    }
    why->clear();
    return found;
}

bool CandidateInspector::showCodeLine(int line)
{
    const QTextBlock block = m_codeView->document()->findBlockByNumber(line - 1);
    if (line < 1 || !block.isValid())
        return false;
    setCurrentIndex(CodeTab);
    QTextCursor cursor(block);
    m_codeView->setTextCursor(cursor);
    m_codeView->centerCursor();
    QTextEdit::ExtraSelection selection;
    selection.cursor = cursor;
    selection.format.setProperty(QTextFormat::FullWidthSelection, true);
    selection.format.setBackground(StatusPalette::isDark(palette()) ? QColor(0x6b, 0x5a, 0x1e)
                                                                    : QColor(0xff, 0xf0, 0xa8));
    m_codeView->setExtraSelections({selection});
    m_highlightedLine = line;
    m_codeView->setFocus(Qt::OtherFocusReason);
    return true;
}

void CandidateInspector::linkClicked(const QUrl &url)
{
    if (url.scheme() == QLatin1String("autocomp-line"))
        showCodeLine(url.path().toInt());
    else if (url.isLocalFile())
        QDesktopServices::openUrl(url);
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
        html +=
            QStringLiteral("<h3>%1. %2 · %3</h3>").arg(number).arg(escaped(phaseName(call.phase)), escaped(call.model));
        if (call.status != QLatin1String("ok") && !call.status.isEmpty())
            html += QStringLiteral("<p><b>") + escaped(call.status) + QStringLiteral("</b> ") + escaped(call.error)
                + QStringLiteral("</p>");
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
        m_llmView->setItem(row, 0, item(phaseName(call.phase)));
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
