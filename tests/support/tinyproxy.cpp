#include "tinyproxy.h"

#include <QDeadlineTimer>
#include <QFile>
#include <QStandardPaths>
#include <QTcpServer>
#include <QTcpSocket>
#include <QThread>

namespace autocomp::test {

TinyProxy::~TinyProxy()
{
    if (m_process.state() != QProcess::NotRunning) {
        m_process.kill();
        m_process.waitForFinished();
    }
}

bool TinyProxy::start(QString *why)
{
    const QString program = QStandardPaths::findExecutable(QStringLiteral("tinyproxy"));
    if (program.isEmpty()) {
        *why = QStringLiteral("tinyproxy is not installed (packaging/install-deps.sh --test installs it)");
        return false;
    }
    {
        QTcpServer probe;
        if (!probe.listen(QHostAddress::LocalHost)) {
            *why = QStringLiteral("no free loopback port");
            return false;
        }
        m_port = probe.serverPort();
    }
    QFile conf(m_dir.filePath(QStringLiteral("tinyproxy.conf")));
    if (!conf.open(QIODevice::WriteOnly)) {
        *why = conf.errorString();
        return false;
    }
    conf.write(
        QStringLiteral("Port %1\nListen 127.0.0.1\nTimeout 60\nMaxClients 64\nAllow 127.0.0.0/8\nLogLevel "
                       "Info\nLogFile \"%2\"\nPidFile \"%3\"\n")
            .arg(m_port)
            .arg(m_dir.filePath(QStringLiteral("tinyproxy.log")), m_dir.filePath(QStringLiteral("tinyproxy.pid")))
            .toUtf8());
    conf.close();
    m_process.setProcessChannelMode(QProcess::MergedChannels);
    m_process.start(program, {QStringLiteral("-d"), QStringLiteral("-c"), conf.fileName()});
    if (!m_process.waitForStarted()) {
        *why = m_process.errorString();
        return false;
    }
    for (QDeadlineTimer deadline(10000); !deadline.hasExpired();) {
        QTcpSocket socket;
        socket.connectToHost(QHostAddress::LocalHost, m_port);
        if (socket.waitForConnected(200))
            return true;
        QThread::msleep(50);
    }
    *why = QStringLiteral("tinyproxy did not accept connections on port %1 within 10 s: %2").arg(m_port).arg(output());
    return false;
}

QString TinyProxy::url() const { return QStringLiteral("http://127.0.0.1:%1").arg(m_port); }

QString TinyProxy::output() { return QString::fromUtf8(m_process.readAll()); }

} // namespace autocomp::test
