#include "cli_keys.h"

#include "cli_common.h"

#include "secrets/secret_store.h"

#include <QFile>
#include <QSet>

#include <cstdio>

using namespace autocomp;
using namespace autocomp::cli;

namespace {

int usage()
{
    err() << "usage: autocomp keys set PROVIDER   (reads the key from standard input)\n"
             "       autocomp keys list\n"
             "       autocomp keys delete PROVIDER\n"
             "providers: "
          << SecretStore::providers().join(QLatin1String(", ")) << Qt::endl;
    return ExitUsage;
}

bool knownProvider(const QString &provider)
{
    if (SecretStore::providers().contains(provider))
        return true;
    err() << "autocomp: unknown provider '" << provider
          << "' (keys are kept for: " << SecretStore::providers().join(QLatin1String(", ")) << ')' << Qt::endl;
    return false;
}

int setKey(const QString &provider)
{
    QFile input;
    if (!input.open(stdin, QIODevice::ReadOnly)) {
        err() << "autocomp: cannot read standard input" << Qt::endl;
        return ExitError;
    }
    // The key is the first line; a trailing newline (echo, a pasted line) is not part of it.
    const QString key = QString::fromUtf8(input.readLine()).trimmed();
    if (key.isEmpty()) {
        err() << "autocomp: no key on standard input; e.g. `printf %s \"$KEY\" | autocomp keys set " << provider << '`'
              << Qt::endl;
        return ExitUsage;
    }
    SecretStore::rememberSecret(key);
    QString error;
    if (!SecretStore::writeBlocking(provider, key, &error)) {
        err() << "autocomp: cannot store the " << provider << " key in the keychain (" << SecretStore::redact(error)
              << "); set " << ModelSpec::apiKeyVariable(provider) << " in the environment instead" << Qt::endl;
        return ExitError;
    }
    out() << "stored the " << provider << " key in the keychain (service " << SecretStore::serviceName() << ")\n";
    QString variable;
    if (SecretStore::hasEnvironmentCredentials(provider, &variable))
        out() << "note: " << variable << " is set and takes precedence over the keychain\n";
    out().flush();
    return ExitOk;
}

int listKeys()
{
    int unavailable = 0;
    QString reason;
    const bool reachable = SecretStore::keychainReachable(&reason);
    for (const QString &provider : SecretStore::providers()) {
        QString variable;
        QString status;
        if (SecretStore::hasEnvironmentCredentials(provider, &variable)) {
            status = toString(KeyStatus::FromEnvironment) + QStringLiteral(" (%1)").arg(variable);
        } else {
            const SecretStore::Result r = SecretStore::readStoredBlocking(provider);
            status = toString(r.status);
            if (r.status == KeyStatus::KeychainUnavailable) {
                ++unavailable;
                reason = SecretStore::redact(r.error, {r.key});
                // Without a keychain at all the reason is said once, below.
                if (reachable)
                    status += QStringLiteral(": ") + reason;
            } else if (r.status == KeyStatus::Missing && !SecretStore::keyRequired(provider)) {
                status += QStringLiteral(" (optional)");
            }
        }
        out() << provider.leftJustified(12) << status << '\n';
    }
    out().flush();
    if (!reachable || unavailable == SecretStore::providers().size()) {
        if (SecretStore::claimEnvironmentOnlyNotice())
            err() << "autocomp: " << SecretStore::environmentOnlyNotice(reason) << Qt::endl;
        return ExitError;
    }
    return ExitOk;
}

int deleteKey(const QString &provider)
{
    QString error;
    if (!SecretStore::deleteBlocking(provider, &error)) {
        err() << "autocomp: cannot delete the " << provider << " key from the keychain: " << SecretStore::redact(error)
              << Qt::endl;
        return ExitError;
    }
    out() << "deleted the " << provider << " key from the keychain\n";
    out().flush();
    return ExitOk;
}

} // namespace

int cmdKeys(const QStringList &positional)
{
    const QString action = positional.value(1);
    if (action == QLatin1String("list") && positional.size() == 2)
        return listKeys();
    if ((action == QLatin1String("set") || action == QLatin1String("delete")) && positional.size() == 3) {
        const QString &provider = positional.at(2);
        if (!knownProvider(provider))
            return ExitUsage;
        return action == QLatin1String("set") ? setKey(provider) : deleteKey(provider);
    }
    return usage();
}

std::function<QString(const QString &)> loadApiKeys(const QList<ModelSpec> &models, QTextStream &report)
{
    QHash<QString, QString> keychain;
    QHash<QString, QString> described; // provider -> where its key comes from
    QSet<QString> reported; // a model named for plans and code is reported once
    QString unreachable;
    const bool reachable = SecretStore::keychainReachable(&unreachable);
    for (const ModelSpec &spec : models) {
        const QString &provider = spec.provider;
        if (!described.contains(provider)) {
            QString variable;
            if (ModelSpec::apiKeyVariable(provider).isEmpty()) {
                described.insert(provider, QString());
            } else if (SecretStore::hasEnvironmentCredentials(provider, &variable)) {
                described.insert(provider, QStringLiteral("from %1").arg(variable));
            } else if (!reachable) {
                // No keychain to ask: said once, then each model's key is missing or optional.
                if (SecretStore::claimEnvironmentOnlyNotice())
                    report << "autocomp: " << SecretStore::environmentOnlyNotice(unreachable) << Qt::endl;
                described.insert(provider,
                                 SecretStore::keyRequired(provider)
                                     ? QStringLiteral("missing (%1 not set)").arg(ModelSpec::apiKeyVariable(provider))
                                     : QStringLiteral("none (optional)"));
            } else {
                const SecretStore::Result r = SecretStore::readStoredBlocking(provider);
                if (r.status == KeyStatus::Stored) {
                    keychain.insert(provider, r.key);
                    described.insert(provider, QStringLiteral("from the keychain"));
                } else if (r.status == KeyStatus::KeychainUnavailable) {
                    described.insert(provider,
                                     QStringLiteral("%1 (%2 not set; keychain unavailable: %3)")
                                         .arg(SecretStore::keyRequired(provider) ? QStringLiteral("missing")
                                                                                 : QStringLiteral("none"),
                                              ModelSpec::apiKeyVariable(provider), SecretStore::redact(r.error)));
                } else {
                    described.insert(provider,
                                     SecretStore::keyRequired(provider)
                                         ? QStringLiteral("missing (%1 not set, none in the keychain)")
                                               .arg(ModelSpec::apiKeyVariable(provider))
                                         : QStringLiteral("none (optional)"));
                }
            }
        }
        if (!described.value(provider).isEmpty() && !reported.contains(spec.text)) {
            reported.insert(spec.text);
            report << "autocomp: " << spec.text << " at " << spec.baseUrl.toString() << ": API key "
                   << described.value(provider) << Qt::endl;
        }
    }
    return SecretStore::lookup(std::move(keychain));
}
