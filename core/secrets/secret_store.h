#pragma once

#include <QHash>
#include <QObject>
#include <QString>
#include <QStringList>

#include <functional>

namespace autocomp {

// Where a provider's API key comes from, as `autocomp keys list` and the settings show it.
enum class KeyStatus { Stored, FromEnvironment, Missing, KeychainUnavailable };
QString toString(KeyStatus status); // "stored", "from environment", "missing", "keychain unavailable"

// API keys: the provider's environment variable wins, then the OS keychain (QtKeychain, service
// "autocomp-workbench", one entry per provider name). Keys never go to the store, logs or error text;
// every key this class hands out is remembered so redact() can strip it from any text.
//
// The asynchronous members run QtKeychain jobs on this object's thread and answer with one signal each.
// The *Blocking helpers spin a local QEventLoop: for the CLI only, never on a GUI thread.
class SecretStore : public QObject
{
    Q_OBJECT
public:
    explicit SecretStore(QObject *parent = nullptr);

    static QString serviceName() { return QStringLiteral("autocomp-workbench"); }
    // Providers that take a key, in the order `keys list` shows them.
    static QStringList providers();
    // Whether a run with this provider needs a key (vllm takes one only when its server asks for it).
    static bool keyRequired(const QString &provider);
    // The environment variables that can supply the provider's key, in lookup order (for aws: the Bedrock
    // API key, then the access key pair).
    static QStringList environmentVariables(const QString &provider);
    // The key from the environment; `variable` names where it came from. For aws this is the Bedrock API key
    // (AWS_BEARER_TOKEN_BEDROCK) only: the SigV4 access key pair is read by the Bedrock client itself.
    static QString environmentKey(const QString &provider, QString *variable = nullptr);
    // True when the environment supplies credentials for the provider (for aws also AWS_ACCESS_KEY_ID +
    // AWS_SECRET_ACCESS_KEY).
    static bool hasEnvironmentCredentials(const QString &provider, QString *variable = nullptr);

    // Replaces every key this process has seen (and `extra`) with "[redacted]".
    static QString redact(const QString &text, const QStringList &extra = {});
    // Registers a secret for redact(); keys read through this class are registered already.
    static void rememberSecret(const QString &secret);

    // Environment first, then the keychain: keyRead(provider, key, status, error). A missing entry is
    // status Missing with no error.
    void readKey(const QString &provider);
    // The keychain entry only (no environment): keyRead as above, status Stored/Missing/KeychainUnavailable.
    void readStoredKey(const QString &provider);
    void writeKey(const QString &provider, const QString &key);
    // Deleting an entry that does not exist succeeds.
    void deleteKey(const QString &provider);

    struct Result
    {
        QString key;
        KeyStatus status = KeyStatus::Missing;
        QString error; // never contains the key
    };
    // CLI only: these run a local event loop until the job answers (or 20 s pass).
    static Result resolveBlocking(const QString &provider);
    static Result readStoredBlocking(const QString &provider);
    static bool writeBlocking(const QString &provider, const QString &key, QString *error);
    static bool deleteBlocking(const QString &provider, QString *error);

    // Whether a keychain can be asked at all. On Linux the Secret Service lives on the D-Bus session bus: with no
    // DBUS_SESSION_BUS_ADDRESS, no user bus at $XDG_RUNTIME_DIR/bus and no dbus-launch (with a display) to start
    // one, every job would only fail after QtDBus's complaints, so none is started; `reason` says what is missing.
    static bool keychainReachable(QString *reason = nullptr);
    // The environment variables that supply keys, one per provider that needs a key.
    static QStringList keyVariables();
    // One line for the user where no keychain answers: keys come from the environment, naming the variables.
    static QString environmentOnlyNotice(const QString &reason);
    // True the first time it is called in this process: the notice is said once, not at every lookup.
    static bool claimEnvironmentOnlyNotice();

    // A lookup for LlmClient::setApiKeyLookup: the environment at call time, then `keychain` (loaded once).
    static std::function<QString(const QString &)> lookup(QHash<QString, QString> keychain);

Q_SIGNALS:
    void keyRead(const QString &provider, const QString &key, autocomp::KeyStatus status, const QString &error);
    void keyWritten(const QString &provider, bool ok, const QString &error);
    void keyDeleted(const QString &provider, bool ok, const QString &error);
};

} // namespace autocomp

Q_DECLARE_METATYPE(autocomp::KeyStatus)
