// SecretStore against a real keychain: gnome-keyring on a private session bus, started by
// tests/support/with-keyring.sh (see tests/unit/CMakeLists.txt); and without any session bus.
#include "secrets/secret_store.h"

#include "no_session_bus.h"

#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QScopeGuard>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <utility>

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
        QVERIFY2(SecretStore::writeBlocking(QStringLiteral("vllm"), QStringLiteral("vllm-key-abcdef"), &error),
                 qPrintable(error));
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
        auto lookup = SecretStore::lookup(
            {{QStringLiteral("anthropic"), m_key}, {QStringLiteral("openai"), QStringLiteral("kc-openai-123456")}});
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
        QVERIFY(!SecretStore::redact(QStringLiteral("secret wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"))
                     .contains(QStringLiteral("EXAMPLEKEY")));
        qunsetenv("AWS_ACCESS_KEY_ID");
        qunsetenv("AWS_SECRET_ACCESS_KEY");
    }

    // A server or a fresh VM: no D-Bus session bus, no user bus, no display for dbus-launch. Every answer comes at
    // once (no 20 s timeout), and the programs say in one line that keys come from the environment, naming the
    // variables, instead of printing a line per provider at every start.
    void withoutSessionBus()
    {
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        const test::NoSessionBus noBus;
        QVERIFY(noBus.isValid());
        env.remove(QStringLiteral("DBUS_SESSION_BUS_ADDRESS"));
        env.remove(QStringLiteral("DISPLAY"));
        env.remove(QStringLiteral("WAYLAND_DISPLAY"));
        env.insert(QStringLiteral("XDG_RUNTIME_DIR"), noBus.runtimeDir());

        QString reason;
        QVERIFY(!SecretStore::keychainReachable(&reason));
        QVERIFY2(reason.contains(QLatin1String("D-Bus")), qPrintable(reason));
        const QString notice = SecretStore::environmentOnlyNotice(reason);
        QVERIFY(!notice.contains(QLatin1Char('\n')));
        for (const char *variable : {"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"})
            QVERIFY2(notice.contains(QLatin1String(variable)), qPrintable(notice));

        SecretStore store;
        QSignalSpy read(&store, &SecretStore::keyRead);
        QElapsedTimer timer;
        timer.start();
        store.readStoredKey(QStringLiteral("openai"));
        QTRY_COMPARE_WITH_TIMEOUT(read.size(), 1, 2000);
        QCOMPARE_STATUS(read.at(0).at(2).value<KeyStatus>(), KeyStatus::KeychainUnavailable);
        QCOMPARE(read.at(0).at(3).toString(), reason);
        QString error;
        QVERIFY(!SecretStore::writeBlocking(QStringLiteral("openai"), m_key, &error));
        QCOMPARE(error, reason);
        QVERIFY2(timer.elapsed() < 2000, qPrintable(QString::number(timer.elapsed())));

        // The CLI: `keys list` says it once, in one line, on standard error; `keys set` says where the key can go.
        const QString cli = qEnvironmentVariable("AUTOCOMP_CLI");
        if (cli.isEmpty())
            QSKIP("AUTOCOMP_CLI is not set (ctest sets it)");
        QProcess list;
        list.setProcessEnvironment(env);
        list.start(cli, {QStringLiteral("keys"), QStringLiteral("list")});
        QVERIFY(list.waitForFinished(30000));
        const QStringList errLines =
            QString::fromUtf8(list.readAllStandardError()).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
        const QString out = QString::fromUtf8(list.readAllStandardOutput());
        QCOMPARE(errLines.size(), 1);
        QVERIFY2(errLines.first().contains(QLatin1String("OPENAI_API_KEY"))
                     && errLines.first().contains(QLatin1String("environment")),
                 qPrintable(errLines.first()));
        QCOMPARE(out.count(QLatin1Char('\n')), SecretStore::providers().size());
        QVERIFY2(out.contains(QLatin1String("keychain unavailable")), qPrintable(out));

        QProcess set;
        set.setProcessEnvironment(env);
        set.start(cli, {QStringLiteral("keys"), QStringLiteral("set"), QStringLiteral("anthropic")});
        QVERIFY(set.waitForStarted());
        set.write(m_key.toUtf8() + '\n');
        set.closeWriteChannel();
        QVERIFY(set.waitForFinished(30000));
        QCOMPARE(set.exitCode(), 1);
        const QString setErr = QString::fromUtf8(set.readAllStandardError());
        QCOMPARE(setErr.trimmed().count(QLatin1Char('\n')), 0);
        QVERIFY2(setErr.contains(QLatin1String("set ANTHROPIC_API_KEY in the environment")), qPrintable(setErr));
        QVERIFY(!setErr.contains(m_key));
    }

    void redaction()
    {
        SecretStore::rememberSecret(QStringLiteral("sk-remembered-987654"));
        QCOMPARE(SecretStore::redact(QStringLiteral("401: bad key sk-remembered-987654 for user")),
                 QStringLiteral("401: bad key [redacted] for user"));
        QCOMPARE(SecretStore::redact(QStringLiteral("token=abcdefgh!"), {QStringLiteral("abcdefgh")}),
                 QStringLiteral("token=[redacted]!"));
        // Keys read from the keychain are remembered too.
        QString error;
        QVERIFY(SecretStore::writeBlocking(QStringLiteral("openrouter"), QStringLiteral("or-key-from-keychain-42"),
                                           &error));
        SecretStore::Result r = SecretStore::readStoredBlocking(QStringLiteral("openrouter"));
        QCOMPARE_STATUS(r.status, KeyStatus::Stored);
        QVERIFY(!SecretStore::redact(QStringLiteral("x or-key-from-keychain-42 y")).contains(QStringLiteral("or-key")));
        QVERIFY(SecretStore::deleteBlocking(QStringLiteral("openrouter"), &error));
    }
};

QTEST_GUILESS_MAIN(TestSecretStore)
#include "tst_secret_store.moc"
