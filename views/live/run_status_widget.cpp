#include "live/run_status_widget.h"

#include "live/run_controller.h"
#include "common/value_format.h"

#include <QLocale>
#include <QTime>
#include <QTimer>

namespace autocomp {

namespace {

QString elapsedText(qint64 ms)
{
    const qint64 s = ms / 1000;
    return QStringLiteral("%1:%2:%3")
        .arg(s / 3600)
        .arg((s / 60) % 60, 2, 10, QLatin1Char('0'))
        .arg(s % 60, 2, 10, QLatin1Char('0'));
}

} // namespace

RunStatusWidget::RunStatusWidget(RunController *controller, QWidget *parent) : QLabel(parent), m_controller(controller)
{
    setObjectName(QStringLiteral("runStatus"));
    setTextFormat(Qt::PlainText);
    m_connection = connect(controller, &RunController::statusChanged, this, &RunStatusWidget::refresh);
    // The elapsed time moves on its own while a run is active.
    auto *ticker = new QTimer(this);
    ticker->setInterval(1000);
    connect(ticker, &QTimer::timeout, this, [this] {
        if (m_external ? m_external->status.state == RunState::Running : m_controller->isActive())
            refresh();
    });
    ticker->start();
    refresh();
}

void RunStatusWidget::setController(RunController *controller)
{
    if (!controller || controller == m_controller)
        return;
    disconnect(m_connection);
    m_controller = controller;
    m_connection = connect(controller, &RunController::statusChanged, this, &RunStatusWidget::refresh);
    refresh();
}

void RunStatusWidget::setExternal(const RunController::Status &status, const QString &driver, const QString &request,
                                  const QDateTime &created, const QDateTime &updated)
{
    m_external = External{status, driver, request, created, updated};
    refresh();
}

void RunStatusWidget::clearExternal()
{
    if (!m_external)
        return;
    m_external.reset();
    refresh();
}

void RunStatusWidget::refresh()
{
    if (m_external) {
        const RunController::Status &s = m_external->status;
        const QLocale locale;
        QStringList parts;
        const bool live = !m_external->driver.isEmpty() && !m_external->driver.startsWith(tr("gone"));
        QString state = tr("Run %1: %2")
                            .arg(s.runId)
                            .arg(s.state == RunState::Running && !live ? tr("interrupted") : toString(s.state));
        if (!m_external->request.isEmpty())
            state += QStringLiteral(" (%1)").arg(m_external->request == QLatin1String("pause")      ? tr("pausing…")
                                                     : m_external->request == QLatin1String("stop") ? tr("stopping…")
                                                                                                    : tr("resuming…"));
        parts << state;
        if (s.state == RunState::Running || s.state == RunState::Paused)
            parts << (m_external->driver.isEmpty() ? tr("driven by no process")
                                                   : tr("driven by %1").arg(m_external->driver));
        parts << tr("iteration %1/%2").arg(s.iteration).arg(s.iterations);
        if (live)
            parts << tr("%1 requests, %2 evaluations in flight").arg(s.inFlightRequests).arg(s.inFlightEvaluations);
        parts << tr("%1 tokens in, %2 out").arg(locale.toString(s.tokensIn), locale.toString(s.tokensOut));
        parts << (s.maxUsd ? tr("%1 of %2").arg(ValueFormat::dollars(s.usd), ValueFormat::dollars(*s.maxUsd))
                           : ValueFormat::dollars(s.usd));
        QStringList tips;
        if (m_external->created.isValid()) {
            // Wall-clock time since the run was created, pauses included: the store keeps no pause intervals.
            const QDateTime end = s.state == RunState::Running && live ? QDateTime::currentDateTimeUtc()
                                                                       : m_external->updated;
            if (end.isValid())
                parts << tr("%1 elapsed").arg(elapsedText(std::max<qint64>(0, m_external->created.msecsTo(end))));
            tips << tr("Elapsed: from the run's start (%1) to %2, as the store records them, pauses included")
                        .arg(QLocale().toString(m_external->created.toLocalTime(), QLocale::ShortFormat),
                             s.state == RunState::Running && live ? tr("now") : tr("its last write"));
        }
        if (!s.reason.isEmpty())
            tips.prepend(tr("Reason: %1").arg(ValueFormat::summary(s.reason)));
        if (text() != parts.join(QStringLiteral(" · ")))
            setText(parts.join(QStringLiteral(" · ")));
        setToolTip(tips.join(QLatin1Char('\n')));
        return;
    }
    const RunController::Status s = m_controller->status();
    if (s.runId == 0 && !m_controller->isActive()) {
        setText(s.state == RunState::Failed ? tr("Run failed to start: %1").arg(ValueFormat::summary(s.reason))
                                            : tr("No active run"));
        setToolTip({});
        return;
    }
    const QLocale locale;
    QStringList parts;
    parts << tr("Run %1: %2").arg(s.runId).arg(toString(s.state));
    if (s.state == RunState::Running && m_controller->isActive() && !s.reason.isEmpty()
        && s.reason != QLatin1String("resumed"))
        parts.last() += QStringLiteral(" (%1)").arg(s.reason);
    parts << tr("iteration %1/%2").arg(s.iteration).arg(s.iterations);
    if (m_controller->isActive())
        parts << tr("%1 requests, %2 evaluations in flight").arg(s.inFlightRequests).arg(s.inFlightEvaluations);
    parts << tr("%1 tokens in, %2 out").arg(locale.toString(s.tokensIn), locale.toString(s.tokensOut));
    parts << (s.maxUsd ? tr("%1 of %2").arg(ValueFormat::dollars(s.usd), ValueFormat::dollars(*s.maxUsd))
                       : ValueFormat::dollars(s.usd));
    parts << tr("%1 elapsed").arg(elapsedText(s.elapsedMs));
    setText(parts.join(QStringLiteral(" · ")));
    setToolTip(s.reason.isEmpty() ? QString() : tr("Reason: %1").arg(ValueFormat::summary(s.reason)));
}

} // namespace autocomp
