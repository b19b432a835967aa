#pragma once

#include "eval/remote_executor.h"

#include <QHash>
#include <QList>
#include <QSet>

#include <functional>

namespace autocomp {

// Evaluations on SSH hosts (OpenSSH): one master connection per host (ControlMaster), reused by every
// candidate; host keys checked strictly against a known_hosts file; the key comes from the agent or
// the configured identity file, which is only named to ssh. Per candidate, one ssh command sends the
// files (a tar stream on its stdin), runs `autocomp eval` in a fresh directory under remote.workdir,
// prints the result and removes the directory; closing its stdin (cancel, timeout, our death) makes
// the far side kill that evaluation.
class SshExecutor : public RemoteExecutor
{
    Q_OBJECT
public:
    explicit SshExecutor(const EvaluationConfig &config, QObject *parent = nullptr);
    ~SshExecutor() override;

    int slotCount() const override { return int(m_slots.size()); }
    int slotGroup(int slot) const override { return m_slots.at(slot); }
    QString slotName(int slot) const override;
    RemoteAttempt *start(int slot, const RemoteTask &task) override;
    QString name() const override { return QStringLiteral("ssh"); }

    // The options of every ssh command to a host (connection reuse, strict host keys, batch mode).
    QStringList sshArguments(const RemoteHost &host) const;
    // Calls `then` once the host's master connection is up, or with the reason it is not.
    void withMaster(int hostIndex, const std::function<void(const QString &error)> &then);
    bool dataSent(int hostIndex, const QString &hash) const { return m_hosts.at(hostIndex).dataSent.contains(hash); }
    void setDataSent(int hostIndex, const QString &hash, bool sent);
    const EvaluationConfig &config() const { return m_config; }

private:
    struct HostState
    {
        bool up = false;
        bool starting = false;
        QList<std::function<void(const QString &)>> waiting;
        QSet<QString> dataSent;
    };
    EvaluationConfig m_config;
    QList<int> m_slots; // slot -> host index
    QList<HostState> m_hosts;
    QString m_controlDir;
};

} // namespace autocomp
