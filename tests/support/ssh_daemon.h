#pragma once

#include <QProcess>
#include <QString>
#include <QTemporaryDir>

#include <memory>

namespace autocomp::test {

// A real OpenSSH server for tests, in a temporary directory: its own host key, a client key that it
// accepts, a known_hosts file holding its key, listening on a free port of 127.0.0.1. Started by the
// test and stopped with it. Needs Debian's openssh-server (packaging/install-deps.sh --test).
class SshDaemon
{
public:
    SshDaemon();
    ~SshDaemon();
    // False with the reason when it cannot run here (no sshd installed, a start failure).
    bool start(QString *why);
    // Empty when openssh-server (sshd) and the ssh client are installed; else why not, for QSKIP.
    static QString absenceReason();

    int port() const { return m_port; }
    QString identity() const { return m_dir.filePath(QStringLiteral("client_key")); }
    QString knownHosts() const { return m_dir.filePath(QStringLiteral("known_hosts")); }
    // A known_hosts file naming another key for this server (a changed host key).
    QString wrongKnownHosts() const { return m_dir.filePath(QStringLiteral("wrong_known_hosts")); }
    QString dir() const { return m_dir.path(); }
    // The configuration block of evaluation: for this server.
    QString evaluationYaml(const QString &remoteCommand, const QString &remoteWorkdir, int slots) const;

private:
    QTemporaryDir m_dir;
    std::unique_ptr<QProcess> m_sshd;
    int m_port = 0;
};

// A free TCP port of 127.0.0.1 (bound once and released).
int freePort();

} // namespace autocomp::test
