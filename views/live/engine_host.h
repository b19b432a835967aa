#pragma once

#include <QHash>
#include <QObject>
#include <QString>

#include <functional>

class QThread;

namespace autocomp {

class RunManager;
class SecretStore;

// The workbench's search thread: one event loop where the RunManager and every running engine live, so
// all runs of the window share one LLM client (per-provider limits, fair turns between runs) and one
// evaluator (machine-wide benchmark slots). Also reads the API keys from the OS keychain once, before
// the first run is launched.
class EngineHost : public QObject
{
    Q_OBJECT
public:
    explicit EngineHost(QObject *parent = nullptr);
    // Suspends the engines still running (they stay resumable) and joins the thread.
    ~EngineHost() override;

    RunManager *manager() const { return m_manager; }
    // Runs `then` (on the GUI thread) once every keychain read has answered: at once when they have.
    void whenKeysReady(QObject *context, std::function<void()> then);
    bool keysReady() const { return m_pendingKeys == 0; }
    // For LlmClient::setApiKeyLookup: the environment at request time, then the keychain.
    std::function<QString(const QString &)> keyLookup() const;

    // Set once every keychain read found no keychain: the one line saying keys come from the environment.
    QString keychainNotice() const { return m_keychainNotice; }

Q_SIGNALS:
    void keysLoaded();
    // No keychain answered any read; said once per process (also on standard error).
    void keychainUnavailable(const QString &notice);

private:
    QThread *m_thread;
    RunManager *m_manager;
    SecretStore *m_secrets;
    QHash<QString, QString> m_keychainKeys; // never logged
    int m_pendingKeys = 0;
    int m_unavailableKeys = 0;
    QString m_keychainNotice;
};

} // namespace autocomp
