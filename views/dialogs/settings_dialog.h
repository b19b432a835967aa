#pragma once

#include <QDialog>
#include <QHash>

class QComboBox;
class QGroupBox;
class QLabel;
class QLineEdit;
class QNetworkAccessManager;
class QNetworkReply;
class QPlainTextEdit;
class QPushButton;
class QTableWidget;

namespace autocomp {

class LlmClient;
class SecretStore;
class Settings;

// Preferences: LLM providers (base URL, concurrency, enabled, API key), the sandbox mode, Slurm
// defaults and the theme (General tab), and the price table (Prices tab). Provider settings and the rest
// go to Settings when OK is pressed; API keys are saved or deleted through SecretStore at once, never to
// QSettings. The theme previews as it is picked and reverts on Cancel. The user's prices.yaml is written
// or removed at once by Save / Reset to Shipped.
class SettingsDialog : public QDialog
{
    Q_OBJECT
public:
    enum ProviderColumns {
        ProviderColumn,
        EnabledColumn,
        BaseUrlColumn,
        ConcurrencyColumn,
        KeyStatusColumn,
        ProviderColumnCount
    };

    SettingsDialog(Settings *settings, QWidget *parent = nullptr);

    // Applies the form to Settings.
    void apply();
    // GET {base}/models with the provider's key; the answer lands in the "connectionResult" label.
    void testConnection(const QString &provider);
    QString selectedProvider() const;
    // Rereads the effective price table into the Prices tab.
    void reloadPrices();
    // Shows the YAML editor, filled with the user's copy, else the shipped file.
    void editPrices();
    bool savePrices();
    bool resetPrices();

    enum PriceColumns { PriceModelColumn, PriceInputColumn, PriceOutputColumn, PriceCachedColumn, PriceColumnCount };

Q_SIGNALS:
    void connectionTested(const QString &provider, bool ok, const QString &message);
    // The user's prices.yaml was saved or removed.
    void pricesChanged();

private:
    void refreshKeyStatus(const QString &provider);
    void providerSelected();
    int rowOf(const QString &provider) const;
    void sendTest(const QString &provider, const QString &key);
    QGroupBox *createProvidersBox();
    QGroupBox *createEvaluationBox();
    QGroupBox *createAppearanceBox();
    void connectKeys();
    QWidget *createPricesTab();
    void validatePrices();

    Settings *m_settings;
    SecretStore *m_secrets;
    LlmClient *m_network; // the runs' client: the same proxy, managers and User-Agent for Test Connection
    QLineEdit *m_proxy;
    QHash<QString, QString> m_keys; // keys read for "Test connection", never shown
    QTableWidget *m_providers;
    QLineEdit *m_keyEdit;
    QPushButton *m_saveKey;
    QPushButton *m_deleteKey;
    QPushButton *m_test;
    QLabel *m_keyLabel;
    QLabel *m_result;
    QComboBox *m_sandbox;
    QLineEdit *m_partition;
    QLineEdit *m_gres;
    QLineEdit *m_time;
    QComboBox *m_theme;
    QString m_savedTheme; // restored on Cancel
    QTableWidget *m_prices;
    QLabel *m_pricesSource;
    QPushButton *m_editPrices;
    QPushButton *m_resetPrices;
    QWidget *m_pricesEditorBox;
    QPlainTextEdit *m_pricesEditor;
    QLabel *m_pricesValidation;
    QPushButton *m_savePrices;
    QString m_testing; // provider whose key is being read for a test
};

} // namespace autocomp
