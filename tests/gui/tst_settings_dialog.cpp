// The settings dialog: an API key stored through its widgets into a real keychain (gnome-keyring on a
// private session bus, tests/support/with-keyring.sh), the Prices tab, and the theme.
#include "llm/price_table.h"
#include "secrets/secret_store.h"
#include "common/settings.h"
#include "dialogs/settings_dialog.h"
#include "common/theme.h"

#include "no_session_bus.h"

#include <QApplication>
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScopeGuard>
#include <QSettings>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>

#include <utility>

using namespace autocomp;

namespace {
// The parts of the dialog's API-key page the tests drive.
struct KeyWidgets
{
    explicit KeyWidgets(const SettingsDialog &dialog)
        : providers(dialog.findChild<QTableWidget *>(QStringLiteral("providersTable")))
        , edit(dialog.findChild<QLineEdit *>(QStringLiteral("apiKeyEdit")))
        , save(dialog.findChild<QPushButton *>(QStringLiteral("saveKeyButton")))
        , result(dialog.findChild<QLabel *>(QStringLiteral("connectionResult")))
    {}
    bool found() const { return providers && edit && save && result; }
    QTableWidget *providers;
    QLineEdit *edit;
    QPushButton *save;
    QLabel *result;
};
} // namespace

class TestSettingsDialog : public QObject
{
    Q_OBJECT

    QTemporaryDir m_home;

    static QString priceOf(QTableWidget *table, const QString &key, int column)
    {
        for (int row = 0; row < table->rowCount(); ++row)
            if (table->item(row, SettingsDialog::PriceModelColumn)->text() == key)
                return table->item(row, column)->data(Qt::UserRole).toString();
        return {};
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_home.isValid());
        // Private settings and data; set before the first QSettings use (it caches its paths).
        qputenv("XDG_CONFIG_HOME", QFile::encodeName(m_home.filePath(QStringLiteral("config"))));
        qputenv("XDG_DATA_HOME", QFile::encodeName(m_home.filePath(QStringLiteral("data"))));
        QCoreApplication::setOrganizationName(QStringLiteral("autocomp-test"));
        QCoreApplication::setApplicationName(QStringLiteral("tst_settings_dialog"));
        for (const QString &provider : SecretStore::providers())
            for (const QString &variable : SecretStore::environmentVariables(provider))
                qunsetenv(variable.toLatin1().constData());
    }

    void storeKeyThroughDialog()
    {
        if (!qEnvironmentVariableIsSet("AUTOCOMP_TEST_KEYRING"))
            QSKIP("needs a keyring: run through tests/support/with-keyring.sh (ctest does)");
        const QString provider = QStringLiteral("openrouter");
        const QString key = QStringLiteral("sk-or-test-0123456789abcdef");
        Settings settings;
        SettingsDialog dialog(&settings);
        dialog.show();
        const KeyWidgets w(dialog);
        QVERIFY(w.found());
        const int row = int(Settings::providers().indexOf(provider));
        QVERIFY(row >= 0);
        // The initial status reads finish first ("checking…" becomes "missing").
        QTRY_COMPARE_WITH_TIMEOUT(w.providers->item(row, SettingsDialog::KeyStatusColumn)->text(),
                                  toString(KeyStatus::Missing), 20000);
        w.providers->selectRow(row);
        QCOMPARE(dialog.selectedProvider(), provider);
        QTest::keyClicks(w.edit, key);
        QTest::mouseClick(w.save, Qt::LeftButton);
        QTRY_COMPARE_WITH_TIMEOUT(w.providers->item(row, SettingsDialog::KeyStatusColumn)->text(),
                                  toString(KeyStatus::Stored), 20000);
        QVERIFY2(w.result->text().contains(QLatin1String("stored")), qPrintable(w.result->text()));
        QVERIFY(w.edit->text().isEmpty()); // the key does not linger in the form

        const SecretStore::Result stored = SecretStore::readStoredBlocking(provider);
        QCOMPARE(toString(stored.status), toString(KeyStatus::Stored));
        QCOMPARE(stored.key, key);
        QString error;
        QVERIFY2(SecretStore::deleteBlocking(provider, &error), qPrintable(error));
    }

    // No D-Bus session bus (a server, a fresh VM): the dialog says keys come from the environment, and a pasted
    // key that cannot be stored stays in the field with the way to set it instead.
    void storeKeyWithoutSessionBus()
    {
        const test::NoSessionBus noBus;
        QVERIFY(noBus.isValid());

        const QString provider = QStringLiteral("openai");
        const QString key = QStringLiteral("sk-pasted-0123456789abcdef");
        Settings settings;
        SettingsDialog dialog(&settings);
        dialog.show();
        const KeyWidgets w(dialog);
        QVERIFY(w.found());
        QVERIFY2(w.result->text().contains(QLatin1String("OPENAI_API_KEY"))
                     && w.result->text().contains(QLatin1String("environment")),
                 qPrintable(w.result->text()));
        const int row = int(Settings::providers().indexOf(provider));
        QTRY_COMPARE_WITH_TIMEOUT(w.providers->item(row, SettingsDialog::KeyStatusColumn)->text(),
                                  toString(KeyStatus::KeychainUnavailable), 2000);
        w.providers->selectRow(row);
        QVERIFY2(w.edit->placeholderText().contains(QLatin1String("OPENAI_API_KEY")),
                 qPrintable(w.edit->placeholderText()));
        QTest::keyClicks(w.edit, key);
        QTest::mouseClick(w.save, Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(w.result->text().contains(QLatin1String("was not stored")), 2000);
        QVERIFY2(w.result->text().contains(QLatin1String("OPENAI_API_KEY"))
                     && w.result->text().contains(QLatin1String("autocomp keys set openai")),
                 qPrintable(w.result->text()));
        QVERIFY(!w.result->text().contains(key));
        QCOMPARE(w.edit->text(), key);
    }

    void prices()
    {
        QDir(m_home.filePath(QStringLiteral("data"))).removeRecursively();
        const QString userCopy = PriceTable::userLocation();
        QVERIFY(userCopy.startsWith(m_home.path()));
        QVERIFY(!PriceTable::shippedLocation().isEmpty());
        Settings settings;
        SettingsDialog dialog(&settings);
        dialog.show();
        auto *tab = dialog.findChild<QWidget *>(QStringLiteral("pricesTab"));
        auto *table = dialog.findChild<QTableWidget *>(QStringLiteral("pricesTable"));
        auto *source = dialog.findChild<QLabel *>(QStringLiteral("pricesSource"));
        auto *editButton = dialog.findChild<QPushButton *>(QStringLiteral("editPricesButton"));
        auto *editor = dialog.findChild<QPlainTextEdit *>(QStringLiteral("pricesEditor"));
        auto *validation = dialog.findChild<QLabel *>(QStringLiteral("pricesValidation"));
        auto *save = dialog.findChild<QPushButton *>(QStringLiteral("savePricesButton"));
        auto *reset = dialog.findChild<QPushButton *>(QStringLiteral("resetPricesButton"));
        QVERIFY(tab && table && source && editButton && editor && validation && save && reset);

        // The shipped table is in effect.
        QVERIFY(table->rowCount() > 0);
        QVERIFY2(source->text().contains(PriceTable::shippedLocation()), qPrintable(source->text()));
        QVERIFY(!reset->isEnabled());
        const QString shippedGpt5 = priceOf(table, QStringLiteral("openai::gpt-5"), SettingsDialog::PriceInputColumn);
        QVERIFY(!shippedGpt5.isEmpty());

        editButton->click();
        QVERIFY(!editor->isHidden());
        QVERIFY(editor->toPlainText().contains(QLatin1String("openai::gpt-5")));
        QVERIFY(save->isEnabled());

        // Invalid YAML: Save disabled, the parse error in place.
        editor->setPlainText(QStringLiteral("as_of: 2030-01-01\nmodels:\n  gpt-9: {input: 1, output: 2}\n"));
        QVERIFY(!save->isEnabled());
        QVERIFY2(validation->text().contains(QLatin1String("provider::model")), qPrintable(validation->text()));
        editor->setPlainText(QStringLiteral("as_of: [oops\n"));
        QVERIFY(!save->isEnabled());
        QVERIFY(!validation->text().isEmpty());

        // Valid: saved to the user's copy, which the table now shows.
        editor->setPlainText(QStringLiteral(
            "as_of: 2030-01-01\nmodels:\n  openai::gpt-5: {input: 7.5, output: 30, cached_input: 0.75}\n"));
        QVERIFY2(save->isEnabled(), qPrintable(validation->text()));
        save->click();
        QVERIFY(QFileInfo::exists(userCopy));
        QCOMPARE(table->rowCount(), 1);
        QCOMPARE(table->item(0, SettingsDialog::PriceModelColumn)->text(), QStringLiteral("openai::gpt-5"));
        QCOMPARE(table->item(0, SettingsDialog::PriceInputColumn)->data(Qt::UserRole).toDouble(), 7.5);
        QCOMPARE(table->item(0, SettingsDialog::PriceOutputColumn)->data(Qt::UserRole).toDouble(), 30.0);
        QCOMPARE(table->item(0, SettingsDialog::PriceCachedColumn)->data(Qt::UserRole).toDouble(), 0.75);
        QVERIFY2(source->text().contains(userCopy), qPrintable(source->text()));
        QVERIFY(reset->isEnabled());
        QCOMPARE(PriceTable::loadDefault().price(QStringLiteral("openai"), QStringLiteral("gpt-5"))->input, 7.5);

        // A second dialog opens the user's copy in the editor.
        {
            SettingsDialog again(&settings);
            again.findChild<QPushButton *>(QStringLiteral("editPricesButton"))->click();
            QVERIFY(again.findChild<QPlainTextEdit *>(QStringLiteral("pricesEditor"))
                        ->toPlainText()
                        .contains(QLatin1String("7.5")));
        }

        // Reset: the user's copy is gone and the shipped table is back.
        reset->click();
        QVERIFY(!QFileInfo::exists(userCopy));
        QVERIFY(table->rowCount() > 1);
        QCOMPARE(priceOf(table, QStringLiteral("openai::gpt-5"), SettingsDialog::PriceInputColumn), shippedGpt5);
        QVERIFY(!reset->isEnabled());
    }

    void theme()
    {
        Settings settings;
        QCOMPARE(settings.theme(), QStringLiteral("system"));
        const bool systemDark = qApp->palette().color(QPalette::Window).lightness() < 128;
        {
            SettingsDialog dialog(&settings);
            dialog.show();
            auto *combo = dialog.findChild<QComboBox *>(QStringLiteral("themeCombo"));
            QVERIFY(combo);
            QCOMPARE(combo->currentData().toString(), QStringLiteral("system"));
            combo->setCurrentIndex(combo->findData(QStringLiteral("dark")));
            QVERIFY(qApp->palette().color(QPalette::Window).lightness() < 128);
            QTRY_VERIFY(dialog.palette().color(QPalette::Window).lightness() < 128); // open windows follow
            dialog.apply();
        }
        QCOMPARE(Settings().theme(), QStringLiteral("dark"));
        QCOMPARE(QSettings().value(SettingsKey::theme()).toString(), QStringLiteral("dark"));

        // Light, then Cancel: the saved (dark) theme comes back.
        {
            SettingsDialog dialog(&settings);
            auto *combo = dialog.findChild<QComboBox *>(QStringLiteral("themeCombo"));
            QCOMPARE(combo->currentData().toString(), QStringLiteral("dark"));
            combo->setCurrentIndex(combo->findData(QStringLiteral("light")));
            QVERIFY(qApp->palette().color(QPalette::Window).lightness() >= 128);
            dialog.reject();
            QVERIFY(qApp->palette().color(QPalette::Window).lightness() < 128);
        }
        QCOMPARE(Settings().theme(), QStringLiteral("dark"));

        // Back to the platform's palette.
        Theme::apply(QStringLiteral("system"));
        QCOMPARE(qApp->palette().color(QPalette::Window).lightness() < 128, systemDark);
        settings.setTheme(QStringLiteral("bogus"));
        QCOMPARE(settings.theme(), QStringLiteral("system"));
    }
};

QTEST_MAIN(TestSettingsDialog)
#include "tst_settings_dialog.moc"
