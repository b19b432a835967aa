#include "llm/gcloud_token_source.h"

#include <QProcess>
#include <QTimer>

namespace autocomp {

namespace {
// Access tokens live 60 minutes; refreshing after 55 leaves room for requests already under way.
constexpr qint64 TokenLifetimeMs = 55 * 60 * 1000;
constexpr int FetchTimeoutMs = 30000;
} // namespace

GcloudTokenSource::GcloudTokenSource(QObject *parent) : QObject(parent) {}

GcloudTokenSource::~GcloudTokenSource()
{
    if (m_process) {
        m_process->disconnect(this);
        m_process->kill();
        m_process->waitForFinished(1000);
    }
}

void GcloudTokenSource::fetch(Callback callback)
{
    if (!m_token.isEmpty() && !m_expiry.hasExpired()) {
        callback(m_token, QString());
        return;
    }
    m_waiting.append(std::move(callback));
    if (m_process)
        return;
    m_process = new QProcess(this);
    auto *watchdog = new QTimer(m_process);
    watchdog->setSingleShot(true);
    connect(watchdog, &QTimer::timeout, m_process, [this] {
        m_process->disconnect(this);
        m_process->kill();
        done({},
             QStringLiteral("`%1 auth print-access-token` did not finish within %2 s")
                 .arg(m_program)
                 .arg(FetchTimeoutMs / 1000));
    });
    connect(m_process, &QProcess::errorOccurred, this, [this](QProcess::ProcessError error) {
        if (error != QProcess::FailedToStart)
            return; // a crash or non-zero exit is reported by finished()
        done({},
             QStringLiteral(
                 "Vertex AI needs an access token, but `%1` could not be started (%2). Install the Google Cloud CLI "
                 "and run `gcloud auth login`, or unset GOOGLE_CLOUD_PROJECT and set GEMINI_API_KEY.")
                 .arg(m_program, m_process->errorString()));
    });
    connect(m_process, &QProcess::finished, this, [this](int exitCode, QProcess::ExitStatus status) {
        const QString out = QString::fromUtf8(m_process->readAllStandardOutput()).trimmed();
        const QString err = QString::fromUtf8(m_process->readAllStandardError()).trimmed();
        if (status != QProcess::NormalExit || exitCode != 0 || out.isEmpty()) {
            done({},
                 QStringLiteral("`%1 auth print-access-token` failed (exit %2): %3")
                     .arg(m_program)
                     .arg(exitCode)
                     .arg(err.left(500)));
            return;
        }
        // The token is the last line; gcloud may print notices before it.
        done(out.section(QLatin1Char('\n'), -1).trimmed(), QString());
    });
    watchdog->start(FetchTimeoutMs);
    m_process->start(m_program, {QStringLiteral("auth"), QStringLiteral("print-access-token")});
}

void GcloudTokenSource::done(const QString &token, const QString &error)
{
    if (m_process) {
        m_process->deleteLater();
        m_process = nullptr;
    }
    if (!token.isEmpty()) {
        m_token = token;
        m_expiry.setRemainingTime(TokenLifetimeMs);
    }
    const QList<Callback> waiting = std::exchange(m_waiting, {});
    for (const Callback &callback : waiting)
        callback(token, error);
}

} // namespace autocomp
