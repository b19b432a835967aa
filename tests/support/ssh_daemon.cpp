#include "ssh_daemon.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QStandardPaths>
#include <QTcpServer>
#include <QTcpSocket>
#include <QThread>

namespace autocomp::test {

namespace {

bool run(const QString &program, const QStringList &args, QString *why)
{
    QProcess p;
    p.start(program, args);
    if (!p.waitForFinished(30000) || p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0) {
        *why = QStringLiteral("%1 %2 failed: %3")
                   .arg(program, args.join(QLatin1Char(' ')), QString::fromUtf8(p.readAllStandardError()));
        return false;
    }
    return true;
}

QByteArray readAll(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

} // namespace

int freePort()
{
    QTcpServer server;
    if (!server.listen(QHostAddress::LocalHost, 0))
        return 0;
    return server.serverPort();
}

SshDaemon::SshDaemon() = default;

SshDaemon::~SshDaemon()
{
    if (m_sshd) {
        m_sshd->terminate();
        if (!m_sshd->waitForFinished(5000))
            m_sshd->kill();
        m_sshd->waitForFinished(5000);
    }
}

QString SshDaemon::absenceReason()
{
    if (!QFile::exists(QStringLiteral("/usr/sbin/sshd")))
        return QStringLiteral(
            "openssh-server is not installed (/usr/sbin/sshd): packaging/install-deps.sh --test installs it");
    for (const char *tool : {"ssh", "ssh-keygen"})
        if (QStandardPaths::findExecutable(QLatin1String(tool)).isEmpty())
            return QStringLiteral(
                       "the OpenSSH client (%1) is not installed: packaging/install-deps.sh --test installs it")
                .arg(QLatin1String(tool));
    return {};
}

bool SshDaemon::start(QString *why)
{
    if (const QString absent = absenceReason(); !absent.isEmpty()) {
        *why = absent;
        return false;
    }
    if (!m_dir.isValid()) {
        *why = QStringLiteral("no temporary directory");
        return false;
    }
    const QString d = m_dir.path();
    if (!run(QStringLiteral("ssh-keygen"),
             {QStringLiteral("-q"), QStringLiteral("-t"), QStringLiteral("ed25519"), QStringLiteral("-N"), QString(),
              QStringLiteral("-f"), d + QStringLiteral("/host_key")},
             why)
        || !run(QStringLiteral("ssh-keygen"),
                {QStringLiteral("-q"), QStringLiteral("-t"), QStringLiteral("ed25519"), QStringLiteral("-N"), QString(),
                 QStringLiteral("-f"), d + QStringLiteral("/client_key")},
                why)
        || !run(QStringLiteral("ssh-keygen"),
                {QStringLiteral("-q"), QStringLiteral("-t"), QStringLiteral("ed25519"), QStringLiteral("-N"), QString(),
                 QStringLiteral("-f"), d + QStringLiteral("/other_key")},
                why))
        return false;
    QFile::copy(d + QStringLiteral("/client_key.pub"), d + QStringLiteral("/authorized_keys"));
    m_port = freePort();
    const QByteArray hostEntry = "[127.0.0.1]:" + QByteArray::number(m_port) + ' ';
    const auto keyPart = [](const QByteArray &pub) { return pub.trimmed().split(' ').mid(0, 2).join(' '); };
    QFile known(knownHosts());
    known.open(QIODevice::WriteOnly);
    known.write(hostEntry + keyPart(readAll(d + QStringLiteral("/host_key.pub"))) + '\n');
    known.close();
    QFile wrong(wrongKnownHosts());
    wrong.open(QIODevice::WriteOnly);
    wrong.write(hostEntry + keyPart(readAll(d + QStringLiteral("/other_key.pub"))) + '\n');
    wrong.close();
    // sshd insists on its privilege separation directory.
    QDir().mkpath(QStringLiteral("/run/sshd"));
    QFile config(d + QStringLiteral("/sshd_config"));
    config.open(QIODevice::WriteOnly);
    config.write(
        QStringLiteral("Port %1\nListenAddress 127.0.0.1\nHostKey %2/host_key\nPidFile %2/sshd.pid\n"
                       "AuthorizedKeysFile %2/authorized_keys\nPubkeyAuthentication yes\nPasswordAuthentication no\n"
                       "KbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\nPermitRootLogin prohibit-password\n"
                       "MaxSessions 64\nMaxStartups 64\nLogLevel ERROR\n")
            .arg(m_port)
            .arg(d)
            .toUtf8());
    config.close();
    m_sshd = std::make_unique<QProcess>();
    m_sshd->setProcessChannelMode(QProcess::ForwardedErrorChannel);
    m_sshd->start(
        QStringLiteral("/usr/sbin/sshd"),
        {QStringLiteral("-D"), QStringLiteral("-e"), QStringLiteral("-f"), d + QStringLiteral("/sshd_config")});
    if (!m_sshd->waitForStarted()) {
        *why = QStringLiteral("sshd did not start: %1").arg(m_sshd->errorString());
        return false;
    }
    QElapsedTimer clock;
    clock.start();
    while (clock.elapsed() < 15000) {
        QTcpSocket socket;
        socket.connectToHost(QHostAddress::LocalHost, quint16(m_port));
        if (socket.waitForConnected(500))
            return true;
        if (m_sshd->state() == QProcess::NotRunning) {
            *why = QStringLiteral("sshd exited with status %1").arg(m_sshd->exitCode());
            return false;
        }
        QThread::msleep(100);
    }
    *why = QStringLiteral("sshd does not accept connections on port %1").arg(m_port);
    return false;
}

QString SshDaemon::evaluationYaml(const QString &remoteCommand, const QString &remoteWorkdir, int slots) const
{
    return QStringLiteral("{executor: ssh, hosts: [{host: 127.0.0.1, port: %1, slots: %2}], ssh: {known_hosts: \"%3\", "
                          "identity: \"%4\"}, "
                          "remote: {command: \"%5\", workdir: \"%6\"}}")
        .arg(m_port)
        .arg(slots)
        .arg(knownHosts(), identity(), remoteCommand, remoteWorkdir);
}

} // namespace autocomp::test
