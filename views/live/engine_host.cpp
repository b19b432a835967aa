#include "live/engine_host.h"

#include "search/run_manager.h"
#include "secrets/secret_store.h"

#include <QCoreApplication>
#include <QThread>
#include <QTimer>

#include <cstdio>

namespace autocomp {

EngineHost::EngineHost(QObject *parent)
    : QObject(parent)
    , m_thread(new QThread(this))
    , m_manager(new RunManager)
    , m_secrets(new SecretStore(this))
{
    m_thread->setObjectName(QStringLiteral("search engines"));
    m_manager->moveToThread(m_thread);
    m_thread->start();

    // Keys from the OS keychain, read without blocking; a run launched meanwhile waits for them.
    const QStringList providers = SecretStore::providers();
    m_pendingKeys = int(providers.size());
    connect(m_secrets, &SecretStore::keyRead, this,
            [this, count = int(providers.size())](const QString &provider, const QString &key, KeyStatus status,
                                                  const QString &error) {
                if (status == KeyStatus::Stored && !key.isEmpty())
                    m_keychainKeys.insert(provider, key);
                // No keychain at all (no session bus, no Secret Service on it): one line, not one per provider.
                if (status == KeyStatus::KeychainUnavailable && ++m_unavailableKeys == count
                    && SecretStore::claimEnvironmentOnlyNotice()) {
                    m_keychainNotice = SecretStore::environmentOnlyNotice(error);
                    std::fprintf(stderr, "%s: %s\n", qPrintable(QCoreApplication::applicationName()),
                                 qPrintable(m_keychainNotice));
                    Q_EMIT keychainUnavailable(m_keychainNotice);
                }
                if (m_pendingKeys > 0 && --m_pendingKeys == 0)
                    Q_EMIT keysLoaded();
            });
    for (const QString &provider : providers)
        m_secrets->readStoredKey(provider);
    // A keychain that never answers does not hold runs back for ever: environment keys still work.
    QTimer::singleShot(10000, this, [this] {
        if (m_pendingKeys > 0) {
            m_pendingKeys = 0;
            Q_EMIT keysLoaded();
        }
    });
}

EngineHost::~EngineHost()
{
    RunManager *manager = m_manager;
    QMetaObject::invokeMethod(
        manager,
        [manager] {
            for (SearchEngine *engine : manager->engines())
                engine->suspend(QStringLiteral("paused: the workbench was closed"));
            delete manager;
        },
        Qt::BlockingQueuedConnection);
    m_thread->quit();
    m_thread->wait();
}

void EngineHost::whenKeysReady(QObject *context, std::function<void()> then)
{
    if (keysReady()) {
        then();
        return;
    }
    auto connection = std::make_shared<QMetaObject::Connection>();
    *connection = connect(this, &EngineHost::keysLoaded, context, [connection, then = std::move(then)] {
        QObject::disconnect(*connection);
        then();
    });
}

std::function<QString(const QString &)> EngineHost::keyLookup() const { return SecretStore::lookup(m_keychainKeys); }

} // namespace autocomp
