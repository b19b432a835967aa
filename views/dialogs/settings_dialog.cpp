#include "dialogs/settings_dialog.h"

#include "editors/code_highlighter.h"
#include "llm/model_spec.h"
#include "llm/price_table.h"
#include "secrets/secret_store.h"
#include "common/settings.h"
#include "common/theme.h"

#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSaveFile>
#include <QPlainTextEdit>
#include <QTabWidget>
#include <QDialogButtonBox>
#include <QFontDatabase>
#include <QLocale>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include "llm/llm_client.h"

#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QPushButton>
#include <QSpinBox>
#include <QTableWidget>
#include <QVBoxLayout>

namespace autocomp {

SettingsDialog::SettingsDialog(Settings *settings, QWidget *parent)
    : QDialog(parent)
    , m_settings(settings)
    , m_secrets(new SecretStore(this))
    , m_network(new LlmClient(this))
{
    setObjectName(QStringLiteral("settingsDialog"));
    setWindowTitle(tr("Settings"));

    auto *general = new QWidget;
    general->setObjectName(QStringLiteral("generalTab"));
    auto *generalLayout = new QVBoxLayout(general);
    generalLayout->addWidget(createProvidersBox(), 1);
    generalLayout->addWidget(createEvaluationBox());
    generalLayout->addWidget(createAppearanceBox());

    auto *tabs = new QTabWidget;
    tabs->setObjectName(QStringLiteral("settingsTabs"));
    tabs->addTab(general, tr("&General"));
    tabs->addTab(createPricesTab(), tr("&Prices"));

    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
    connect(buttons, &QDialogButtonBox::accepted, this, [this] {
        QString proxyError;
        if (!LlmClient::parseProxy(m_proxy->text(), &proxyError)) {
            m_result->setText(proxyError);
            m_proxy->setFocus();
            return;
        }
        apply();
        accept();
    });
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(this, &QDialog::rejected, this, [this] {
        if (m_theme->currentData().toString() != m_savedTheme)
            Theme::apply(m_savedTheme);
    });

    auto *layout = new QVBoxLayout(this);
    layout->addWidget(tabs, 1);
    layout->addWidget(buttons);
    resize(860, 620);

    connectKeys();

    for (const QString &p : Settings::providers())
        refreshKeyStatus(p);
    m_providers->selectRow(0);
    if (QString reason; !SecretStore::keychainReachable(&reason))
        m_result->setText(SecretStore::environmentOnlyNotice(reason));
}

// The providers table (enabled, base URL, concurrency, key status), the proxy, and the key and test row.
QGroupBox *SettingsDialog::createProvidersBox()
{
    const QStringList providers = Settings::providers();
    m_providers = new QTableWidget(int(providers.size()), ProviderColumnCount);
    m_providers->setObjectName(QStringLiteral("providersTable"));
    m_providers->setHorizontalHeaderLabels(
        {tr("Provider"), tr("Enabled"), tr("Base URL"), tr("Concurrency"), tr("API key")});
    m_providers->verticalHeader()->hide();
    m_providers->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_providers->setSelectionMode(QAbstractItemView::SingleSelection);
    m_providers->horizontalHeader()->setSectionResizeMode(BaseUrlColumn, QHeaderView::Stretch);
    for (int row = 0; row < providers.size(); ++row) {
        const QString &p = providers.at(row);
        auto *name = new QTableWidgetItem(p);
        name->setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable);
        m_providers->setItem(row, ProviderColumn, name);
        auto *enabled = new QTableWidgetItem;
        enabled->setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemIsUserCheckable);
        enabled->setCheckState(m_settings->providerEnabled(p) ? Qt::Checked : Qt::Unchecked);
        m_providers->setItem(row, EnabledColumn, enabled);
        auto *url = new QTableWidgetItem(m_settings->providerBaseUrl(p));
        url->setToolTip(tr("Empty: %1").arg(m_settings->effectiveBaseUrl(p)));
        m_providers->setItem(row, BaseUrlColumn, url);
        auto *concurrency = new QSpinBox;
        concurrency->setRange(1, 256);
        concurrency->setValue(m_settings->providerConcurrency(p));
        m_providers->setCellWidget(row, ConcurrencyColumn, concurrency);
        auto *status = new QTableWidgetItem(tr("checking…"));
        status->setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable);
        m_providers->setItem(row, KeyStatusColumn, status);
    }
    m_providers->resizeColumnToContents(ProviderColumn);

    m_keyLabel = new QLabel;
    m_keyEdit = new QLineEdit;
    m_keyEdit->setObjectName(QStringLiteral("apiKeyEdit"));
    m_keyEdit->setEchoMode(QLineEdit::Password);
    m_saveKey = new QPushButton(tr("Store Key"));
    m_saveKey->setObjectName(QStringLiteral("saveKeyButton"));
    m_deleteKey = new QPushButton(tr("Delete Key"));
    m_deleteKey->setObjectName(QStringLiteral("deleteKeyButton"));
    m_test = new QPushButton(tr("Test Connection"));
    m_test->setObjectName(QStringLiteral("testConnectionButton"));
    m_result = new QLabel;
    m_result->setObjectName(QStringLiteral("connectionResult"));
    m_result->setWordWrap(true);
    m_result->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto *keyRow = new QHBoxLayout;
    keyRow->addWidget(m_keyLabel);
    keyRow->addWidget(m_keyEdit, 1);
    keyRow->addWidget(m_saveKey);
    keyRow->addWidget(m_deleteKey);
    keyRow->addWidget(m_test);

    m_proxy = new QLineEdit(m_settings->proxy());
    m_proxy->setObjectName(QStringLiteral("proxyEdit"));
    m_proxy->setPlaceholderText(tr("system (http_proxy, https_proxy, no_proxy)"));
    m_proxy->setToolTip(
        tr("Empty: the system's proxy settings. \"none\": direct connections. Or http://[user:password@]host:port, "
           "socks5://host:port. Runs and Test Connection use it alike."));
    auto *proxyRow = new QHBoxLayout;
    proxyRow->addWidget(new QLabel(tr("Pro&xy:")));
    proxyRow->addWidget(m_proxy, 1);
    static_cast<QLabel *>(proxyRow->itemAt(0)->widget())->setBuddy(m_proxy);

    auto *providersBox = new QGroupBox(tr("LLM providers"));
    auto *providersLayout = new QVBoxLayout(providersBox);
    providersLayout->addWidget(m_providers, 1);
    providersLayout->addLayout(proxyRow);
    providersLayout->addLayout(keyRow);
    providersLayout->addWidget(m_result);
    return providersBox;
}

// Defaults for new runs: the sandbox mode and the slurm executor's fields.
QGroupBox *SettingsDialog::createEvaluationBox()
{
    m_sandbox = new QComboBox;
    m_sandbox->setObjectName(QStringLiteral("sandboxModeCombo"));
    m_sandbox->addItems({QStringLiteral("auto"), QStringLiteral("off"), QStringLiteral("required")});
    m_sandbox->setCurrentText(m_settings->sandboxMode());
    m_sandbox->setToolTip(tr("auto: bubblewrap when available; required: refuse to evaluate without it"));
    m_partition = new QLineEdit(m_settings->slurmPartition());
    m_partition->setObjectName(QStringLiteral("slurmPartition"));
    m_gres = new QLineEdit(m_settings->slurmGres());
    m_gres->setObjectName(QStringLiteral("slurmGres"));
    m_gres->setPlaceholderText(QStringLiteral("gpu:1"));
    m_time = new QLineEdit(m_settings->slurmTime());
    m_time->setObjectName(QStringLiteral("slurmTime"));
    m_time->setPlaceholderText(QStringLiteral("00:30:00"));
    auto *evalBox = new QGroupBox(tr("Evaluation"));
    auto *evalForm = new QFormLayout(evalBox);
    evalForm->addRow(tr("&Sandbox:"), m_sandbox);
    evalForm->addRow(tr("Slurm &partition:"), m_partition);
    evalForm->addRow(tr("Slurm &gres:"), m_gres);
    evalForm->addRow(tr("Slurm &time:"), m_time);
    for (QLineEdit *edit : {m_partition, m_gres, m_time})
        edit->setToolTip(
            tr("Filled in for new runs that switch to the slurm executor (New Run, Where evaluations run)"));
    return evalBox;
}

// The theme, applied as soon as it is picked (and restored on Cancel).
QGroupBox *SettingsDialog::createAppearanceBox()
{
    m_savedTheme = m_settings->theme();
    m_theme = new QComboBox;
    m_theme->setObjectName(QStringLiteral("themeCombo"));
    m_theme->addItem(tr("System"), QStringLiteral("system"));
    m_theme->addItem(tr("Light"), QStringLiteral("light"));
    m_theme->addItem(tr("Dark"), QStringLiteral("dark"));
    m_theme->setCurrentIndex(qMax(0, m_theme->findData(m_savedTheme)));
    connect(m_theme, &QComboBox::currentIndexChanged, this,
            [this] { Theme::apply(m_theme->currentData().toString()); });
    auto *appearanceBox = new QGroupBox(tr("Appearance"));
    auto *appearanceForm = new QFormLayout(appearanceBox);
    appearanceForm->addRow(tr("T&heme:"), m_theme);
    return appearanceBox;
}

// The keychain's answers and the key row's buttons.
void SettingsDialog::connectKeys()
{
    connect(m_secrets, &SecretStore::keyRead, this,
            [this](const QString &provider, const QString &key, KeyStatus status, const QString &error) {
                if (QTableWidgetItem *item = m_providers->item(rowOf(provider), KeyStatusColumn)) {
                    item->setText(toString(status));
                    item->setToolTip(error);
                }
                if (!key.isEmpty())
                    m_keys.insert(provider, key);
                if (provider == m_testing) {
                    m_testing.clear();
                    sendTest(provider, key);
                }
            });
    connect(m_secrets, &SecretStore::keyWritten, this, [this](const QString &provider, bool ok, const QString &error) {
        if (ok) {
            m_keyEdit->clear(); // the key does not linger in the form
            m_result->setText(tr("The %1 key was stored in the keychain.").arg(provider));
        } else {
            // The pasted key stays in the field, so nothing is lost while the user follows the advice.
            m_result->setText(
                tr("The %1 key was not stored (%2). It is still in the field. Set %3 in the environment the "
                   "workbench starts from instead, or store it with `autocomp keys set %1` where a keychain runs.")
                    .arg(provider, error, ModelSpec::apiKeyVariable(provider)));
        }
        refreshKeyStatus(provider);
    });
    connect(m_secrets, &SecretStore::keyDeleted, this, [this](const QString &provider, bool ok, const QString &error) {
        m_result->setText(ok ? tr("The %1 key was deleted from the keychain.").arg(provider)
                             : tr("The %1 key was not deleted: %2").arg(provider, error));
        m_keys.remove(provider);
        refreshKeyStatus(provider);
    });
    connect(m_saveKey, &QPushButton::clicked, this, [this] {
        const QString provider = selectedProvider();
        if (provider.isEmpty() || m_keyEdit->text().trimmed().isEmpty())
            return;
        m_result->setText(tr("Storing the %1 key…").arg(provider));
        m_secrets->writeKey(provider, m_keyEdit->text().trimmed());
    });
    connect(m_deleteKey, &QPushButton::clicked, this, [this] {
        if (const QString provider = selectedProvider(); !provider.isEmpty())
            m_secrets->deleteKey(provider);
    });
    connect(m_test, &QPushButton::clicked, this, [this] {
        if (const QString provider = selectedProvider(); !provider.isEmpty())
            testConnection(provider);
    });
    connect(m_providers, &QTableWidget::itemSelectionChanged, this, &SettingsDialog::providerSelected);
}

int SettingsDialog::rowOf(const QString &provider) const { return int(Settings::providers().indexOf(provider)); }

QString SettingsDialog::selectedProvider() const
{
    const int row = m_providers->currentRow();
    return row >= 0 && row < Settings::providers().size() ? Settings::providers().at(row) : QString();
}

void SettingsDialog::refreshKeyStatus(const QString &provider) { m_secrets->readKey(provider); }

void SettingsDialog::providerSelected()
{
    const QString provider = selectedProvider();
    m_keyLabel->setText(tr("%1 key:").arg(provider));
    const QString variable = ModelSpec::apiKeyVariable(provider);
    if (!SecretStore::keychainReachable() && !variable.isEmpty())
        m_keyEdit->setPlaceholderText(tr("no keychain here: set %1 in the environment").arg(variable));
    else
        m_keyEdit->setPlaceholderText(tr("paste a key to store it in the keychain"));
    const bool enabled = !provider.isEmpty();
    for (QWidget *w : {static_cast<QWidget *>(m_keyEdit), static_cast<QWidget *>(m_saveKey),
                       static_cast<QWidget *>(m_deleteKey), static_cast<QWidget *>(m_test)})
        w->setEnabled(enabled);
}

void SettingsDialog::apply()
{
    const QStringList providers = Settings::providers();
    for (int row = 0; row < providers.size(); ++row) {
        const QString &p = providers.at(row);
        m_settings->setProviderEnabled(p, m_providers->item(row, EnabledColumn)->checkState() == Qt::Checked);
        m_settings->setProviderBaseUrl(p, m_providers->item(row, BaseUrlColumn)->text());
        m_settings->setProviderConcurrency(
            p, static_cast<QSpinBox *>(m_providers->cellWidget(row, ConcurrencyColumn))->value());
    }
    m_settings->setProxy(m_proxy->text());
    m_settings->setSandboxMode(m_sandbox->currentText());
    m_settings->setSlurmPartition(m_partition->text().trimmed());
    m_settings->setSlurmGres(m_gres->text().trimmed());
    m_settings->setSlurmTime(m_time->text().trimmed());
    m_savedTheme = m_theme->currentData().toString();
    m_settings->setTheme(m_savedTheme);
}

QWidget *SettingsDialog::createPricesTab()
{
    auto *tab = new QWidget;
    tab->setObjectName(QStringLiteral("pricesTab"));

    m_pricesSource = new QLabel;
    m_pricesSource->setObjectName(QStringLiteral("pricesSource"));
    m_pricesSource->setWordWrap(true);
    m_pricesSource->setTextInteractionFlags(Qt::TextSelectableByMouse);

    m_prices = new QTableWidget(0, PriceColumnCount);
    m_prices->setObjectName(QStringLiteral("pricesTable"));
    m_prices->setHorizontalHeaderLabels({tr("Model"), tr("Input"), tr("Output"), tr("Cached input")});
    m_prices->horizontalHeaderItem(PriceInputColumn)->setToolTip(tr("USD per 1M input tokens"));
    m_prices->horizontalHeaderItem(PriceOutputColumn)->setToolTip(tr("USD per 1M output tokens"));
    m_prices->horizontalHeaderItem(PriceCachedColumn)->setToolTip(tr("USD per 1M cached input tokens (cache reads)"));
    m_prices->verticalHeader()->hide();
    m_prices->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_prices->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_prices->setAlternatingRowColors(true);
    m_prices->horizontalHeader()->setSectionResizeMode(PriceModelColumn, QHeaderView::Stretch);

    m_editPrices = new QPushButton(tr("&Edit…"));
    m_editPrices->setObjectName(QStringLiteral("editPricesButton"));
    m_resetPrices = new QPushButton(tr("&Reset to Shipped"));
    m_resetPrices->setObjectName(QStringLiteral("resetPricesButton"));
    m_resetPrices->setToolTip(tr("Delete your prices.yaml so the shipped table applies again"));
    auto *buttonRow = new QHBoxLayout;
    buttonRow->addWidget(new QLabel(tr("Prices in USD per 1M tokens.")), 1);
    buttonRow->addWidget(m_editPrices);
    buttonRow->addWidget(m_resetPrices);

    m_pricesEditorBox = new QWidget;
    auto *editorLayout = new QVBoxLayout(m_pricesEditorBox);
    editorLayout->setContentsMargins(0, 0, 0, 0);
    m_pricesEditor = new QPlainTextEdit;
    m_pricesEditor->setObjectName(QStringLiteral("pricesEditor"));
    m_pricesEditor->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_pricesEditor->setLineWrapMode(QPlainTextEdit::NoWrap);
    CodeHighlighter::attach(m_pricesEditor->document(), QStringLiteral("yaml"));
    m_pricesValidation = new QLabel;
    m_pricesValidation->setObjectName(QStringLiteral("pricesValidation"));
    m_pricesValidation->setWordWrap(true);
    m_pricesValidation->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_savePrices = new QPushButton(tr("&Save"));
    m_savePrices->setObjectName(QStringLiteral("savePricesButton"));
    m_savePrices->setToolTip(tr("Write your copy: %1").arg(QDir::toNativeSeparators(PriceTable::userLocation())));
    auto *closeEditor = new QPushButton(tr("&Close Editor"));
    closeEditor->setObjectName(QStringLiteral("closePricesEditorButton"));
    auto *editorButtons = new QHBoxLayout;
    editorButtons->addWidget(m_pricesValidation, 1);
    editorButtons->addWidget(m_savePrices);
    editorButtons->addWidget(closeEditor);
    editorLayout->addWidget(m_pricesEditor, 1);
    editorLayout->addLayout(editorButtons);
    m_pricesEditorBox->hide();

    auto *layout = new QVBoxLayout(tab);
    layout->addWidget(m_pricesSource);
    layout->addWidget(m_prices, 1);
    layout->addLayout(buttonRow);
    layout->addWidget(m_pricesEditorBox, 1);

    connect(m_editPrices, &QPushButton::clicked, this, &SettingsDialog::editPrices);
    connect(m_resetPrices, &QPushButton::clicked, this, &SettingsDialog::resetPrices);
    connect(m_savePrices, &QPushButton::clicked, this, &SettingsDialog::savePrices);
    connect(closeEditor, &QPushButton::clicked, m_pricesEditorBox, &QWidget::hide);
    connect(m_pricesEditor, &QPlainTextEdit::textChanged, this, &SettingsDialog::validatePrices);

    reloadPrices();
    return tab;
}

void SettingsDialog::reloadPrices()
{
    QString source;
    QString error;
    const PriceTable table = PriceTable::loadDefault(&source, &error);
    QStringList keys = table.entries().keys();
    keys.sort();
    m_prices->setRowCount(int(keys.size()));
    const auto money = [](double value) {
        auto *item = new QTableWidgetItem(QLocale().toString(value, 'f', value != 0 && value < 0.1 ? 4 : 2));
        item->setData(Qt::UserRole, value);
        item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
        return item;
    };
    for (int row = 0; row < keys.size(); ++row) {
        const ModelPrice price = table.entries().value(keys.at(row));
        m_prices->setItem(row, PriceModelColumn, new QTableWidgetItem(keys.at(row)));
        m_prices->setItem(row, PriceInputColumn, money(price.input));
        m_prices->setItem(row, PriceOutputColumn, money(price.output));
        m_prices->setItem(row, PriceCachedColumn, money(price.cachedInput));
    }
    const bool user = QFileInfo::exists(PriceTable::userLocation());
    if (!error.isEmpty())
        m_pricesSource->setText(tr("No price table in effect (runs cost 0): %1").arg(error));
    else
        m_pricesSource->setText(
            tr("Prices as of %1, %n model(s), from %2 (%3).", nullptr, table.size())
                .arg(QLocale().toString(table.asOf(), QLocale::ShortFormat), QDir::toNativeSeparators(source),
                     user && QFileInfo(source) == QFileInfo(PriceTable::userLocation()) ? tr("your copy")
                                                                                        : tr("shipped")));
    m_resetPrices->setEnabled(user);
}

void SettingsDialog::editPrices()
{
    QString path = PriceTable::userLocation();
    if (!QFileInfo::exists(path))
        path = PriceTable::shippedLocation();
    QByteArray text;
    if (QFile file(path); !path.isEmpty() && file.open(QIODevice::ReadOnly))
        text = file.readAll();
    m_pricesEditor->setPlainText(QString::fromUtf8(text));
    m_pricesEditorBox->show();
    m_pricesEditor->setFocus();
    validatePrices();
}

void SettingsDialog::validatePrices()
{
    QString error;
    const std::optional<PriceTable> table = PriceTable::parse(m_pricesEditor->toPlainText().toUtf8(), &error);
    m_savePrices->setEnabled(table.has_value());
    if (table) {
        m_pricesValidation->setStyleSheet(QString());
        m_pricesValidation->setText(
            tr("Valid: %n model(s), as of %1.", nullptr, table->size()).arg(table->asOf().toString(Qt::ISODate)));
    } else {
        m_pricesValidation->setStyleSheet(QStringLiteral("color: #d03030;"));
        m_pricesValidation->setText(tr("Invalid: %1").arg(error));
    }
}

bool SettingsDialog::savePrices()
{
    const QByteArray yaml = m_pricesEditor->toPlainText().toUtf8();
    QString error;
    if (!PriceTable::parse(yaml, &error)) {
        validatePrices();
        return false;
    }
    const QString path = PriceTable::userLocation();
    QDir().mkpath(QFileInfo(path).absolutePath());
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(yaml) != yaml.size() || !file.commit()) {
        m_pricesValidation->setStyleSheet(QStringLiteral("color: #d03030;"));
        m_pricesValidation->setText(
            tr("Could not write %1: %2").arg(QDir::toNativeSeparators(path), file.errorString()));
        return false;
    }
    m_pricesValidation->setStyleSheet(QString());
    m_pricesValidation->setText(tr("Saved to %1.").arg(QDir::toNativeSeparators(path)));
    reloadPrices();
    Q_EMIT pricesChanged();
    return true;
}

bool SettingsDialog::resetPrices()
{
    const QString path = PriceTable::userLocation();
    if (QFileInfo::exists(path) && !QFile::remove(path)) {
        m_pricesSource->setText(tr("Could not delete %1.").arg(QDir::toNativeSeparators(path)));
        return false;
    }
    reloadPrices();
    if (!m_pricesEditorBox->isHidden())
        editPrices(); // show the shipped file now in effect
    Q_EMIT pricesChanged();
    return true;
}

void SettingsDialog::testConnection(const QString &provider)
{
    if (provider == QLatin1String("gcp") || provider == QLatin1String("aws")) {
        const QString message =
            tr("Test Connection speaks the OpenAI-compatible and Anthropic model lists; %1 is not covered.")
                .arg(provider);
        m_result->setText(message);
        Q_EMIT connectionTested(provider, false, message);
        return;
    }
    m_result->setText(tr("Testing %1…").arg(provider));
    if (m_keys.contains(provider)) {
        sendTest(provider, m_keys.value(provider));
        return;
    }
    m_testing = provider; // the key is read first; keyRead sends the request
    m_secrets->readKey(provider);
}

void SettingsDialog::sendTest(const QString &provider, const QString &key)
{
    const int row = rowOf(provider);
    QString base = row >= 0 ? m_providers->item(row, BaseUrlColumn)->text().trimmed() : QString();
    if (base.isEmpty())
        base = m_settings->effectiveBaseUrl(provider);
    while (base.endsWith(QLatin1Char('/')))
        base.chop(1);
    const bool anthropic = provider == QLatin1String("anthropic");
    QNetworkRequest request(QUrl(base
                                 + (anthropic && !base.endsWith(QLatin1String("/v1")) ? QStringLiteral("/v1/models")
                                                                                      : QStringLiteral("/models"))));
    request.setTransferTimeout(15000);
    if (!key.isEmpty()) {
        if (anthropic) {
            request.setRawHeader("x-api-key", key.toUtf8());
            request.setRawHeader("anthropic-version", "2023-06-01");
        } else {
            request.setRawHeader("Authorization", "Bearer " + key.toUtf8());
        }
    }
    QString proxyError;
    if (!m_network->setProxy(m_proxy->text(), &proxyError)) {
        m_result->setText(proxyError);
        Q_EMIT connectionTested(provider, false, proxyError);
        return;
    }
    QNetworkReply *reply = m_network->get(request);
    const QString url = request.url().toString();
    connect(reply, &QNetworkReply::finished, this, [this, reply, provider, url] {
        reply->deleteLater();
        const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
        const QJsonArray models =
            QJsonDocument::fromJson(reply->readAll()).object().value(QLatin1String("data")).toArray();
        const bool ok = reply->error() == QNetworkReply::NoError && status / 100 == 2;
        const QString message = ok
            ? tr("%1: HTTP %2, %n model(s) listed", nullptr, int(models.size())).arg(url).arg(status)
            : tr("%1: %2").arg(url,
                               SecretStore::redact(status ? tr("HTTP %1 %2").arg(status).arg(reply->errorString())
                                                          : reply->errorString()));
        m_result->setText(message);
        Q_EMIT connectionTested(provider, ok, message);
    });
}

} // namespace autocomp
