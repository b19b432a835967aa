#include "secrets/secret_store.h"

#include "llm/model_spec.h"

#include <QEventLoop>
#include <QFileInfo>
#include <QLoggingCategory>
#include <QMutex>
#include <QSet>
#include <QStandardPaths>
#include <QTimer>

#include <algorithm>
#include <atomic>

#ifdef AUTOCOMP_HAVE_QTKEYCHAIN
#include <qt6keychain/keychain.h>
#endif

// Debug lines (each failed keychain job) only on request (QT_LOGGING_RULES="autocomp.secrets.debug=true"): a
// machine without a keychain would otherwise print one per provider at every start.
Q_LOGGING_CATEGORY(lcSecrets, "autocomp.secrets", QtInfoMsg)

namespace autocomp {

namespace {

QMutex s_secretsMutex;

QSet<QString> &knownSecrets()
{
    static QSet<QString> s_secrets;
    return s_secrets;
}

constexpr int s_blockingTimeoutMs = 20000;

std::atomic_bool s_noticeClaimed{false};

} // namespace

QString toString(KeyStatus status)
{
    switch (status) {
    case KeyStatus::Stored: return QStringLiteral("stored");
    case KeyStatus::FromEnvironment: return QStringLiteral("from environment");
    case KeyStatus::Missing: return QStringLiteral("missing");
    case KeyStatus::KeychainUnavailable: return QStringLiteral("keychain unavailable");
    }
    return {};
}

SecretStore::SecretStore(QObject *parent) : QObject(parent) { qRegisterMetaType<autocomp::KeyStatus>(); }

QStringList SecretStore::providers()
{
    return {QStringLiteral("openai"),   QStringLiteral("anthropic"),  QStringLiteral("aws"), QStringLiteral("gcp"),
            QStringLiteral("together"), QStringLiteral("openrouter"), QStringLiteral("vllm")};
}

bool SecretStore::keyRequired(const QString &provider)
{
    return provider != QLatin1String("vllm") && !ModelSpec::apiKeyVariable(provider).isEmpty();
}

QStringList SecretStore::environmentVariables(const QString &provider)
{
    QStringList variables;
    const QString main = ModelSpec::apiKeyVariable(provider);
    if (!main.isEmpty())
        variables << main;
    if (provider == QLatin1String("gcp"))
        variables << QStringLiteral("GOOGLE_API_KEY");
    if (provider == QLatin1String("aws"))
        variables << QStringLiteral("AWS_ACCESS_KEY_ID") << QStringLiteral("AWS_SECRET_ACCESS_KEY")
                  << QStringLiteral("AWS_SESSION_TOKEN");
    return variables;
}

QString SecretStore::environmentKey(const QString &provider, QString *variable)
{
    QStringList candidates{ModelSpec::apiKeyVariable(provider)};
    if (provider == QLatin1String("gcp"))
        candidates << QStringLiteral("GOOGLE_API_KEY");
    for (const QString &name : candidates) {
        if (name.isEmpty())
            continue;
        QString value = qEnvironmentVariable(name.toLatin1().constData()).trimmed();
        if (!value.isEmpty()) {
            rememberSecret(value);
            if (variable)
                *variable = name;
            return value;
        }
    }
    return {};
}

bool SecretStore::hasEnvironmentCredentials(const QString &provider, QString *variable)
{
    if (!environmentKey(provider, variable).isEmpty())
        return true;
    if (provider == QLatin1String("aws") && !qEnvironmentVariableIsEmpty("AWS_ACCESS_KEY_ID")
        && !qEnvironmentVariableIsEmpty("AWS_SECRET_ACCESS_KEY")) {
        rememberSecret(qEnvironmentVariable("AWS_SECRET_ACCESS_KEY"));
        rememberSecret(qEnvironmentVariable("AWS_SESSION_TOKEN"));
        if (variable)
            *variable = QStringLiteral("AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY");
        return true;
    }
    return false;
}

bool SecretStore::keychainReachable(QString *reason)
{
#ifndef AUTOCOMP_HAVE_QTKEYCHAIN
    if (reason)
        *reason = QStringLiteral("this build has no keychain support (QtKeychain)");
    return false;
#elif defined(Q_OS_UNIX) && !defined(Q_OS_MACOS) && !defined(Q_OS_ANDROID)
    if (!qEnvironmentVariableIsEmpty("DBUS_SESSION_BUS_ADDRESS"))
        return true;
    // systemd's per-user bus, which libdbus and GDBus find without the variable.
    if (const QString runtime = qEnvironmentVariable("XDG_RUNTIME_DIR");
        !runtime.isEmpty() && QFileInfo::exists(runtime + QStringLiteral("/bus")))
        return true;
    // Both libraries can start a session bus through dbus-launch, which needs an X display.
    if (!qEnvironmentVariableIsEmpty("DISPLAY")
        && !QStandardPaths::findExecutable(QStringLiteral("dbus-launch")).isEmpty())
        return true;
    if (reason)
        *reason = QStringLiteral("no D-Bus session bus for a Secret Service");
    return false;
#else
    Q_UNUSED(reason);
    return true;
#endif
}

QStringList SecretStore::keyVariables()
{
    QStringList variables;
    for (const QString &provider : providers())
        if (keyRequired(provider))
            variables << ModelSpec::apiKeyVariable(provider);
    return variables;
}

QString SecretStore::environmentOnlyNotice(const QString &reason)
{
    return QStringLiteral("no keychain here (%1): API keys come from the environment variables %2")
        .arg(reason, keyVariables().join(QLatin1String(", ")));
}

bool SecretStore::claimEnvironmentOnlyNotice() { return !s_noticeClaimed.exchange(true); }

void SecretStore::rememberSecret(const QString &secret)
{
    // Very short strings would blank out ordinary words; no real key is that short.
    if (secret.trimmed().size() < 6)
        return;
    QMutexLocker lock(&s_secretsMutex);
    knownSecrets().insert(secret.trimmed());
}

QString SecretStore::redact(const QString &text, const QStringList &extra)
{
    QStringList secrets;
    {
        QMutexLocker lock(&s_secretsMutex);
        secrets = knownSecrets().values();
    }
    for (const QString &e : extra)
        if (e.trimmed().size() >= 6)
            secrets << e.trimmed();
    // Longest first, so a key that contains another is replaced whole.
    std::sort(secrets.begin(), secrets.end(), [](const QString &a, const QString &b) { return a.size() > b.size(); });
    QString out = text;
    for (const QString &secret : std::as_const(secrets))
        out.replace(secret, QStringLiteral("[redacted]"));
    return out;
}

void SecretStore::readKey(const QString &provider)
{
    QString variable;
    const QString key = environmentKey(provider, &variable);
    if (!key.isEmpty()) {
        // Queued, so every answer arrives after the call returns, as with a keychain job.
        QMetaObject::invokeMethod(
            this, [this, provider, key] { Q_EMIT keyRead(provider, key, KeyStatus::FromEnvironment, {}); },
            Qt::QueuedConnection);
        return;
    }
    readStoredKey(provider);
}

#ifdef AUTOCOMP_HAVE_QTKEYCHAIN

namespace {
bool unavailable(QKeychain::Error error)
{
    return error == QKeychain::NoBackendAvailable || error == QKeychain::NotImplemented
        || error == QKeychain::OtherError || error == QKeychain::AccessDenied || error == QKeychain::AccessDeniedByUser;
}
} // namespace

void SecretStore::readStoredKey(const QString &provider)
{
    if (QString reason; !keychainReachable(&reason)) {
        QMetaObject::invokeMethod(
            this, [this, provider, reason] { Q_EMIT keyRead(provider, {}, KeyStatus::KeychainUnavailable, reason); },
            Qt::QueuedConnection);
        return;
    }
    // Jobs are not children of this object: libsecret calls back into a job when its D-Bus call ends, so a
    // job must outlive its store; it deletes itself when done (autoDelete), and the connection below
    // (context `this`) is dropped if the store went first.
    auto *job = new QKeychain::ReadPasswordJob(serviceName(), nullptr);
    job->setAutoDelete(true);
    job->setKey(provider);
    connect(job, &QKeychain::Job::finished, this, [this, provider](QKeychain::Job *finished) {
        auto *read = static_cast<QKeychain::ReadPasswordJob *>(finished);
        const QString key = read->textData();
        switch (read->error()) {
        case QKeychain::NoError:
            rememberSecret(key);
            Q_EMIT keyRead(provider, key, key.isEmpty() ? KeyStatus::Missing : KeyStatus::Stored, {});
            return;
        case QKeychain::EntryNotFound: Q_EMIT keyRead(provider, {}, KeyStatus::Missing, {}); return;
        default: {
            const QString error = redact(read->errorString(), {key});
            qCDebug(lcSecrets) << "keychain read of" << provider << "failed:" << error;
            Q_EMIT keyRead(provider, {},
                           unavailable(read->error()) ? KeyStatus::KeychainUnavailable : KeyStatus::Missing, error);
        }
        }
    });
    job->start();
}

void SecretStore::writeKey(const QString &provider, const QString &key)
{
    rememberSecret(key);
    if (QString reason; !keychainReachable(&reason)) {
        QMetaObject::invokeMethod(
            this, [this, provider, reason] { Q_EMIT keyWritten(provider, false, reason); }, Qt::QueuedConnection);
        return;
    }
    auto *job = new QKeychain::WritePasswordJob(serviceName(), nullptr);
    job->setAutoDelete(true);
    job->setKey(provider);
    job->setTextData(key);
    connect(job, &QKeychain::Job::finished, this, [this, provider, key](QKeychain::Job *finished) {
        const bool ok = finished->error() == QKeychain::NoError;
        const QString error = ok ? QString() : redact(finished->errorString(), {key});
        if (!ok)
            qCDebug(lcSecrets) << "keychain write of" << provider << "failed:" << error;
        Q_EMIT keyWritten(provider, ok, error);
    });
    job->start();
}

void SecretStore::deleteKey(const QString &provider)
{
    if (QString reason; !keychainReachable(&reason)) {
        QMetaObject::invokeMethod(
            this, [this, provider, reason] { Q_EMIT keyDeleted(provider, false, reason); }, Qt::QueuedConnection);
        return;
    }
    auto *job = new QKeychain::DeletePasswordJob(serviceName(), nullptr);
    job->setAutoDelete(true);
    job->setKey(provider);
    connect(job, &QKeychain::Job::finished, this, [this, provider](QKeychain::Job *finished) {
        const bool ok = finished->error() == QKeychain::NoError || finished->error() == QKeychain::EntryNotFound;
        const QString error = ok ? QString() : redact(finished->errorString());
        if (!ok)
            qCDebug(lcSecrets) << "keychain delete of" << provider << "failed:" << error;
        Q_EMIT keyDeleted(provider, ok, error);
    });
    job->start();
}

#else // no QtKeychain at build time: every keychain operation answers "unavailable"

void SecretStore::readStoredKey(const QString &provider)
{
    QMetaObject::invokeMethod(
        this,
        [this, provider] {
            Q_EMIT keyRead(provider, {}, KeyStatus::KeychainUnavailable, QStringLiteral("built without QtKeychain"));
        },
        Qt::QueuedConnection);
}

void SecretStore::writeKey(const QString &provider, const QString &key)
{
    rememberSecret(key);
    QMetaObject::invokeMethod(
        this, [this, provider] { Q_EMIT keyWritten(provider, false, QStringLiteral("built without QtKeychain")); },
        Qt::QueuedConnection);
}

void SecretStore::deleteKey(const QString &provider)
{
    QMetaObject::invokeMethod(
        this, [this, provider] { Q_EMIT keyDeleted(provider, false, QStringLiteral("built without QtKeychain")); },
        Qt::QueuedConnection);
}

#endif

namespace {

QString timeoutMessage()
{
    return QStringLiteral("the keychain did not answer within %1 s").arg(s_blockingTimeoutMs / 1000);
}

// Spins `loop` until `answered` (set by a slot that also quits the loop) or the timeout. CLI only.
bool waitForAnswer(QEventLoop &loop, const bool &answered)
{
    if (answered) // the job failed synchronously
        return true;
    QTimer::singleShot(s_blockingTimeoutMs, &loop, &QEventLoop::quit);
    loop.exec();
    return answered;
}

} // namespace

SecretStore::Result SecretStore::readStoredBlocking(const QString &provider)
{
    SecretStore store;
    QEventLoop loop;
    Result result;
    bool answered = false;
    connect(&store, &SecretStore::keyRead, &loop,
            [&](const QString &, const QString &key, KeyStatus status, const QString &error) {
                result = {key, status, error};
                answered = true;
                loop.quit();
            });
    store.readStoredKey(provider);
    if (!waitForAnswer(loop, answered))
        result = {{}, KeyStatus::KeychainUnavailable, timeoutMessage()};
    return result;
}

SecretStore::Result SecretStore::resolveBlocking(const QString &provider)
{
    Result result;
    result.key = environmentKey(provider);
    if (!result.key.isEmpty()) {
        result.status = KeyStatus::FromEnvironment;
        return result;
    }
    return readStoredBlocking(provider);
}

bool SecretStore::writeBlocking(const QString &provider, const QString &key, QString *error)
{
    SecretStore store;
    QEventLoop loop;
    bool ok = false;
    bool answered = false;
    QString message = timeoutMessage();
    connect(&store, &SecretStore::keyWritten, &loop, [&](const QString &, bool written, const QString &e) {
        ok = written;
        message = e;
        answered = true;
        loop.quit();
    });
    store.writeKey(provider, key);
    waitForAnswer(loop, answered);
    if (error)
        *error = ok ? QString() : message;
    return ok;
}

bool SecretStore::deleteBlocking(const QString &provider, QString *error)
{
    SecretStore store;
    QEventLoop loop;
    bool ok = false;
    bool answered = false;
    QString message = timeoutMessage();
    connect(&store, &SecretStore::keyDeleted, &loop, [&](const QString &, bool deleted, const QString &e) {
        ok = deleted;
        message = e;
        answered = true;
        loop.quit();
    });
    store.deleteKey(provider);
    waitForAnswer(loop, answered);
    if (error)
        *error = ok ? QString() : message;
    return ok;
}

std::function<QString(const QString &)> SecretStore::lookup(QHash<QString, QString> keychain)
{
    for (const QString &key : std::as_const(keychain))
        rememberSecret(key);
    return [keychain = std::move(keychain)](const QString &provider) {
        const QString fromEnvironment = environmentKey(provider);
        return fromEnvironment.isEmpty() ? keychain.value(provider) : fromEnvironment;
    };
}

} // namespace autocomp
