// SecretStore against a real keychain: gnome-keyring on a private session bus, started by
// tests/support/with-keyring.sh (see tests/unit/CMakeLists.txt).
#include "secrets/secret_store.h"

#include <QSignalSpy>
#include <QTest>

using namespace autocomp;

// QTest would print an enum through autocomp::toString(), which returns a QString: compare the names.
#define QCOMPARE_STATUS(actual, expected) QCOMPARE(toString(actual), toString(expected))

class TestSecretStore : public QObject
{
    Q_OBJECT

    const QString m_key = QStringLiteral("sk-test-0123456789abcdef");

private Q_SLOTS:
    void initTestCase()
    {
        if (!qEnvironmentVariableIsSet("AUTOCOMP_TEST_KEYRING"))
            QSKIP("needs a keyring: run through tests/support/with-keyring.sh (ctest does)");
        for (const QString &provider : SecretStore::providers())
            for (const QString &variable : SecretStore::environmentVariables(provider))
                qunsetenv(variable.toLatin1().constData());
    }

    void statusNames()
    {
        QCOMPARE(toString(KeyStatus::Stored), QStringLiteral("stored"));
        QCOMPARE(toString(KeyStatus::FromEnvironment), QStringLiteral("from environment"));
        QCOMPARE(toString(KeyStatus::Missing), QStringLiteral("missing"));
        QCOMPARE(toString(KeyStatus::KeychainUnavailable), QStringLiteral("keychain unavailable"));
    }

    void storeReadDeleteAsync()
    {
        SecretStore store;
        QSignalSpy written(&store, &SecretStore::keyWritten);
        QSignalSpy read(&store, &SecretStore::keyRead);
        QSignalSpy deleted(&store, &SecretStore::keyDeleted);

        // Nothing stored yet: missing, and not an error.
        store.readKey(QStringLiteral("together"));
        QTRY_COMPARE_WITH_TIMEOUT(read.size(), 1, 20000);
        QCOMPARE_STATUS(read.at(0).at(2).value<KeyStatus>(), KeyStatus::Missing);
        QCOMPARE(read.at(0).at(3).toString(), QString());

        store.writeKey(QStringLiteral("together"), m_key);
        QTRY_COMPARE_WITH_TIMEOUT(written.size(), 1, 20000);
        QVERIFY2(written.at(0).at(1).toBool(), qPrintable(written.at(0).at(2).toString()));

        store.readKey(QStringLiteral("together"));
        QTRY_COMPARE_WITH_TIMEOUT(read.size(), 2, 20000);
        QCOMPARE(read.at(1).at(0).toString(), QStringLiteral("together"));
        QCOMPARE(read.at(1).at(1).toString(), m_key);
        QCOMPARE_STATUS(read.at(1).at(2).value<KeyStatus>(), KeyStatus::Stored);

        store.deleteKey(QStringLiteral("together"));
        QTRY_COMPARE_WITH_TIMEOUT(deleted.size(), 1, 20000);
        QVERIFY(deleted.at(0).at(1).toBool());
        store.readKey(QStringLiteral("together"));
        QTRY_COMPARE_WITH_TIMEOUT(read.size(), 3, 20000);
        QCOMPARE_STATUS(read.at(2).at(2).value<KeyStatus>(), KeyStatus::Missing);
        QCOMPARE(read.at(2).at(1).toString(), QString());

        // Deleting what is not there succeeds (EntryNotFound is not an error).
        store.deleteKey(QStringLiteral("together"));
        QTRY_COMPARE_WITH_TIMEOUT(deleted.size(), 2, 20000);
        QVERIFY(deleted.at(1).at(1).toBool());
    }

    // The CLI's blocking helpers, and the same entries seen by every provider independently.
    void blockingHelpersAndListing()
    {
        QString error;
        QVERIFY2(SecretStore::writeBlocking(QStringLiteral("openai"), m_key, &error), qPrintable(error));
        QVERIFY2(SecretStore::writeBlocking(QStringLiteral("vllm"), QStringLiteral("vllm-key-abcdef"), &error), qPrintable(error));
        QHash<QString, KeyStatus> listed;
        for (const QString &provider : SecretStore::providers())
            listed.insert(provider, SecretStore::resolveBlocking(provider).status);
        QCOMPARE_STATUS(listed.value(QStringLiteral("openai")), KeyStatus::Stored);
        QCOMPARE_STATUS(listed.value(QStringLiteral("vllm")), KeyStatus::Stored);
        QCOMPARE_STATUS(listed.value(QStringLiteral("anthropic")), KeyStatus::Missing);
        QCOMPARE(SecretStore::readStoredBlocking(QStringLiteral("vllm")).key, QStringLiteral("vllm-key-abcdef"));

        QVERIFY(SecretStore::deleteBlocking(QStringLiteral("openai"), &error));
        QVERIFY(SecretStore::deleteBlocking(QStringLiteral("vllm"), &error));
        QCOMPARE_STATUS(SecretStore::resolveBlocking(QStringLiteral("openai")).status, KeyStatus::Missing);
    }

    // The environment variable wins over a stored key; the lookup for LlmClient does the same.
    void environmentWins()
    {
        QString error;
        QVERIFY(SecretStore::writeBlocking(QStringLiteral("anthropic"), m_key, &error));
        qputenv("ANTHROPIC_API_KEY", "env-key-zyxwvut");
        SecretStore::Result r = SecretStore::resolveBlocking(QStringLiteral("anthropic"));
        QCOMPARE_STATUS(r.status, KeyStatus::FromEnvironment);
        QCOMPARE(r.key, QStringLiteral("env-key-zyxwvut"));
        auto lookup = SecretStore::lookup({{QStringLiteral("anthropic"), m_key}, {QStringLiteral("openai"), QStringLiteral("kc-openai-123456")}});
        QCOMPARE(lookup(QStringLiteral("anthropic")), QStringLiteral("env-key-zyxwvut"));
        QCOMPARE(lookup(QStringLiteral("openai")), QStringLiteral("kc-openai-123456"));
        QCOMPARE(lookup(QStringLiteral("together")), QString());
        qunsetenv("ANTHROPIC_API_KEY");
        QCOMPARE(lookup(QStringLiteral("anthropic")), m_key);
        r = SecretStore::resolveBlocking(QStringLiteral("anthropic"));
        QCOMPARE_STATUS(r.status, KeyStatus::Stored);
        QVERIFY(SecretStore::deleteBlocking(QStringLiteral("anthropic"), &error));

        qputenv("GOOGLE_API_KEY", "google-key-123456");
        QCOMPARE_STATUS(SecretStore::resolveBlocking(QStringLiteral("gcp")).status, KeyStatus::FromEnvironment);
        qunsetenv("GOOGLE_API_KEY");
        qputenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE");
        qputenv("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY");
        QString variable;
        QVERIFY(SecretStore::hasEnvironmentCredentials(QStringLiteral("aws"), &variable));
        QCOMPARE(variable, QStringLiteral("AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY"));
        QVERIFY(!SecretStore::redact(QStringLiteral("secret wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")).contains(QStringLiteral("EXAMPLEKEY")));
        qunsetenv("AWS_ACCESS_KEY_ID");
        qunsetenv("AWS_SECRET_ACCESS_KEY");
    }

    void redaction()
    {
        SecretStore::rememberSecret(QStringLiteral("sk-remembered-987654"));
        QCOMPARE(SecretStore::redact(QStringLiteral("401: bad key sk-remembered-987654 for user")),
                 QStringLiteral("401: bad key [redacted] for user"));
        QCOMPARE(SecretStore::redact(QStringLiteral("token=abcdefgh!"), {QStringLiteral("abcdefgh")}), QStringLiteral("token=[redacted]!"));
        // Keys read from the keychain are remembered too.
        QString error;
        QVERIFY(SecretStore::writeBlocking(QStringLiteral("openrouter"), QStringLiteral("or-key-from-keychain-42"), &error));
        SecretStore::Result r = SecretStore::readStoredBlocking(QStringLiteral("openrouter"));
        QCOMPARE_STATUS(r.status, KeyStatus::Stored);
        QVERIFY(!SecretStore::redact(QStringLiteral("x or-key-from-keychain-42 y")).contains(QStringLiteral("or-key")));
        QVERIFY(SecretStore::deleteBlocking(QStringLiteral("openrouter"), &error));
    }
};

QTEST_GUILESS_MAIN(TestSecretStore)
#include "tst_secret_store.moc"
